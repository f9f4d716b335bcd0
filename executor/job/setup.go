package job

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

	// certificateCheck is how often every replica reads the certificates' Secret again, renewing
	// the serving certificate before it expires and serving the newest one.
	certificateCheck = time.Hour
	// setupTimeout bounds reading (or making) the certificates' Secret at start.
	setupTimeout = 30 * time.Second
)

// Options are what the job executor needs from the controller's configuration.
type Options struct {
	// Dir is the controller's own directory (--work-dir): modules below it, and the artifact
	// store and the bundles being prepared, which it keeps there.
	Dir string
	// Job shapes every runner Job.
	Job JobOptions
	// ArtifactsAddress is where every replica's artifact endpoint listens for runners;
	// ArtifactsHosts are the names and IPs its serving certificate is for.
	ArtifactsAddress string
	ArtifactsHosts   []string
	// ArtifactsSecret is the Secret, in the controller's own namespace, of the certificates all
	// replicas share (Certificates); DefaultArtifactsSecret in apis.DefaultNamespace when empty.
	ArtifactsSecret types.NamespacedName
	// Leader tells a follower where the leader serves, so that it relays runners there; nil
	// when this process leads whenever it runs (no leader election).
	Leader Leader
	// Slots, Waiters and Keys: see Executor.
	Slots   slots.Policy
	Waiters *slots.Waiters
	Keys    state.KeySource
	// Runs records the Runs.
	Runs *runs.Recorder
	// Pool, when set, executes the Runs in runner pools (--runner pool).
	Pool RunnerPool
	// RefreshEvery is how often an Observe-only instance is read: Crossplane reads one at every
	// poll, and a Refresh Run is that read.
	RefreshEvery time.Duration
}

// A Leader is what the artifact endpoint needs of the leader election: where the leader
// serves, and where this replica does.
type Leader interface {
	artifact.LeaderFinder
	// Self is the address this replica advertises.
	Self() string
}

// New makes the job executor and registers what it needs with mgr: the artifact endpoint runners
// fetch modules and providers from (on every replica; the leader serves, the others relay to it),
// the renewal of its certificates, and the watcher that fails Runs whose Job failed.
func New(mgr manager.Manager, harness *terraform.Harness, o Options) (*Executor, error) {
	certs := &Certificates{Client: mgr.GetClient(), Secret: artifactsSecret(o.ArtifactsSecret), Hosts: o.ArtifactsHosts,
		Log: mgr.GetLogger().WithName("artifacts")}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if err := certs.Ensure(ctx); err != nil {
		return nil, errors.Wrap(err, errArtifactServer)
	}
	x := &Executor{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Manager: mgr, Runs: o.Runs, Harness: harness,
		Artifacts: &artifact.Store{Dir: filepath.Join(o.Dir, "artifacts")},
		Modules:   filepath.Join(o.Dir, "modules"),
		Dir:       filepath.Join(o.Dir, "bundles"),
		Job:       o.Job,
		Slots:     o.Slots, Waiters: o.Waiters, Keys: o.Keys,
		RefreshEvery: o.RefreshEvery,
		Pool:         o.Pool,
	}
	x.inputs.cache, x.inputs.fresh = x.Client, x.Reader
	// The same authority on every replica: a runner whose Job one leader made trusts the next.
	x.Job.ArtifactsCA = certs.CA()
	srv := &artifact.Server{
		Store:    x.Artifacts,
		Reviewer: newCachedReviewer(artifact.NewTokenReviewer(mgr.GetClient(), []string{RunnerTokenAudience})),
		Bundles:  x.ActiveBundles,
		Inputs:   x.inputs.Lookup,
		Log:      mgr.GetLogger().WithName("artifacts"),
	}
	hs := artifact.NewRenewingHTTPServer(o.ArtifactsAddress, srv, certs.Serving)
	gw := &artifactGateway{address: o.ArtifactsAddress, leader: o.Leader, elected: mgr.Elected(),
		log: mgr.GetLogger().WithName("artifacts")}
	gw.local = artifact.NewConnListener(gatewayAddr(o.ArtifactsAddress))
	for _, r := range []manager.Runnable{gw, &artifactServer{srv: hs, ln: gw.local}, &certificateRenewer{certs: certs}} {
		if err := mgr.Add(r); err != nil {
			return nil, err
		}
	}
	if err := (&Watcher{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), StartTimeout: o.Job.StartTimeout}).SetupWithManager(mgr); err != nil {
		return nil, err
	}
	return x, nil
}

// artifactGateway listens on the artifact endpoint's address on every replica: the leader
// answers runners' connections itself, a follower relays them to the leader (artifact.Gateway).
type artifactGateway struct {
	address string
	leader  Leader
	elected <-chan struct{}
	local   *artifact.ConnListener
	log     logr.Logger
}

func (g *artifactGateway) NeedLeaderElection() bool { return false }

func (g *artifactGateway) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", g.address)
	if err != nil {
		return errors.Wrap(err, errArtifactServer)
	}
	gw := &artifact.Gateway{Listener: ln, Local: g.local, Log: g.log, Leader: noLeader{},
		Leading: func() bool {
			select {
			case <-g.elected:
				return true
			default:
				return false
			}
		}}
	if g.leader != nil {
		gw.Leader, gw.Self = g.leader, g.leader.Self()
	}
	return errors.Wrap(gw.Serve(ctx), errArtifactServer)
}

// noLeader knows no leader: without leader election a process leads as soon as it runs.
type noLeader struct{}

func (noLeader) LeaderAddress() (string, bool) { return "", false }

// gatewayAddr is the address the leader's server reports for the connections it is handed.
func gatewayAddr(address string) net.Addr {
	if a, err := net.ResolveTCPAddr("tcp", address); err == nil {
		return a
	}
	return &net.TCPAddr{}
}

// artifactServer serves bundles over TLS, on the connections the gateway hands it, while the
// manager runs. Only the leader serves: it is the replica that makes Runs, and so bundles.
type artifactServer struct {
	srv *http.Server
	ln  *artifact.ConnListener
}

func (s *artifactServer) NeedLeaderElection() bool { return true }

func (s *artifactServer) Start(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.srv.Shutdown(shut)
	}()
	if err := s.srv.ServeTLS(s.ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return errors.Wrap(err, errArtifactServer)
	}
	return nil
}

// certificateRenewer reads the certificates' Secret again every certificateCheck, on every
// replica: a replica that has run for most of a year renews the serving certificate itself, and
// serves the newest that another replica wrote.
type certificateRenewer struct{ certs *Certificates }

func (r *certificateRenewer) NeedLeaderElection() bool { return false }

func (r *certificateRenewer) Start(ctx context.Context) error {
	t := time.NewTicker(certificateCheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := r.certs.Ensure(ctx); err != nil {
				r.certs.Log.Info("Cannot renew the artifact endpoint's certificates; trying again later", "error", err.Error())
			}
		}
	}
}

// RunnerRules are what a runner's service account needs in its own namespace, bound there with a
// RoleBinding to a ClusterRole holding them (the chart's <release>-runner): read its Run (a pool's
// pod lists and watches its namespace's Runs for one to take), record the result, keep the instance's state and plan Secrets, and hold the
// state Lease. Nothing cluster-scoped, and no Run it could create.
func RunnerRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{v1alpha1.Group}, Resources: []string{"runs"}, Verbs: []string{"get", "list", "watch"}},
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
