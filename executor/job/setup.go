package job

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/artifact"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/slots"
	"github.com/modkind/modkind/state"
	"github.com/modkind/modkind/terraform"
)

const (
	errArtifactServer = "cannot start the artifact server"
	// certificateLife is how long the artifact server's self-signed certificate is valid; a new
	// one is made at every start, and runner Jobs carry the one of the process that made them.
	certificateLife = 365 * 24 * time.Hour
)

// Options are what the job executor needs from the controller's configuration.
type Options struct {
	// Dir is the controller's own directory (--work-dir): modules below it, and the artifact
	// store, the bundles being prepared and the server's certificate, which it keeps there.
	Dir string
	// Job shapes every runner Job.
	Job JobOptions
	// ArtifactsAddress is where the artifact server listens for runners; ArtifactsHosts are the
	// names and IPs its certificate is for.
	ArtifactsAddress string
	ArtifactsHosts   []string
	// Slots, Waiters and Keys: see Executor.
	Slots   slots.Policy
	Waiters *slots.Waiters
	Keys    state.KeySource
	// Runs records the Runs.
	Runs *runs.Recorder
	// RefreshEvery is how often an Observe-only instance is read: Crossplane reads one at every
	// poll, and a Refresh Run is that read.
	RefreshEvery time.Duration
}

// New makes the job executor and registers what it needs with mgr: the artifact server runners
// fetch modules and providers from, and the watcher that fails Runs whose Job failed.
func New(mgr manager.Manager, runner *terraform.Runner, o Options) (*Executor, error) {
	certPEM, keyPEM, err := servingCertificate(filepath.Join(o.Dir, "artifacts"), o.ArtifactsHosts)
	if err != nil {
		return nil, errors.Wrap(err, errArtifactServer)
	}
	x := &Executor{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Manager: mgr, Runs: o.Runs, Runner: runner,
		Artifacts: &artifact.Store{Dir: filepath.Join(o.Dir, "artifacts")},
		Modules:   filepath.Join(o.Dir, "modules"),
		Dir:       filepath.Join(o.Dir, "bundles"),
		Job:       o.Job,
		Slots:     o.Slots, Waiters: o.Waiters, Keys: o.Keys,
		RefreshEvery: o.RefreshEvery,
	}
	x.Job.ArtifactsCA = certPEM
	srv := &artifact.Server{
		Store:    x.Artifacts,
		Reviewer: artifact.NewTokenReviewer(mgr.GetClient(), []string{RunnerTokenAudience}),
		Bundles:  x.ActiveBundles,
		Log:      mgr.GetLogger().WithName("artifacts"),
	}
	hs, err := artifact.NewHTTPServer(o.ArtifactsAddress, srv, certPEM, keyPEM)
	if err != nil {
		return nil, errors.Wrap(err, errArtifactServer)
	}
	if err := mgr.Add(&artifactServer{srv: hs}); err != nil {
		return nil, err
	}
	if err := (&Watcher{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), StartTimeout: o.Job.StartTimeout}).SetupWithManager(mgr); err != nil {
		return nil, err
	}
	return x, nil
}

// servingCertificate is the artifact server's certificate kept in dir, or a new one made and kept
// there when none is, it is about to expire, or it is not for all of hosts: runner Jobs made
// before a restart carry the certificate they trust, and keep working after it.
func servingCertificate(dir string, hosts []string) (certPEM, keyPEM []byte, err error) {
	certPath, keyPath := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	certPEM, cerr := os.ReadFile(certPath)
	keyPEM, kerr := os.ReadFile(keyPath)
	if cerr == nil && kerr == nil && certificateServes(certPEM, keyPEM, hosts) {
		return certPEM, keyPEM, nil
	}
	if certPEM, keyPEM, err = artifact.SelfSigned(hosts, certificateLife); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, os.WriteFile(certPath, certPEM, 0o600)
}

// certificateServes reports whether the pair is usable for hosts for at least another month.
func certificateServes(certPEM, keyPEM []byte, hosts []string) bool {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil || len(pair.Certificate) == 0 {
		return false
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil || time.Until(cert.NotAfter) < 30*24*time.Hour {
		return false
	}
	for _, h := range hosts {
		if cert.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// artifactServer serves bundles over TLS while the manager runs. Only the leader serves: it is
// the replica that makes Runs, and so bundles.
type artifactServer struct{ srv *http.Server }

func (s *artifactServer) NeedLeaderElection() bool { return true }

func (s *artifactServer) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.srv.Addr)
	if err != nil {
		return errors.Wrap(err, errArtifactServer)
	}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.srv.Shutdown(shut)
	}()
	if err := s.srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return errors.Wrap(err, errArtifactServer)
	}
	return nil
}

// RunnerRules are what a runner's service account needs in its own namespace, bound there with a
// RoleBinding to a ClusterRole holding them (the chart's <release>-runner): read its Run and
// record the result, keep the instance's state and plan Secrets and the Run's inputs, and hold the
// state Lease. Nothing cluster-scoped, and no Run it could create.
func RunnerRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{v1alpha1.Group}, Resources: []string{"runs"}, Verbs: []string{"get"}},
		{APIGroups: []string{v1alpha1.Group}, Resources: []string{"runs/status"}, Verbs: []string{"get", "update", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "create", "update", "delete"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update", "delete"}},
	}
}

// RunnerAccess are the objects that let runner Jobs run in namespace ns with the default runner
// service account, as the chart's runner.namespaces makes them: the ClusterRole named clusterRole
// holding RunnerRules, the namespace, the service account and its RoleBinding.
func RunnerAccess(clusterRole, ns string) []client.Object {
	return []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: clusterRole}, Rules: RunnerRules()},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: DefaultRunnerServiceAccount}},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clusterRole},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: DefaultRunnerServiceAccount}},
		},
	}
}
