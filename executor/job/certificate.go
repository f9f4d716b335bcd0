package job

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"slices"
	"sync/atomic"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/artifact"
)

// DefaultArtifactsSecret names the Secret of the artifact endpoint's certificates in the
// controller's namespace, when nothing names another (the chart's <release>-artifacts-tls).
const DefaultArtifactsSecret = "modkind-artifacts-tls"

// Keys of the artifact endpoint's Secret: a serving pair under the names of a kubernetes.io/tls
// Secret, and the authority that signs it.
const (
	KeyCACert = "ca.crt"
	KeyCAKey  = "ca.key"
)

const (
	// caLife is how long the authority runners trust is valid; it is replaced when less than
	// caRenewBefore is left, which a cluster sees once in nine years.
	caLife        = 10 * 365 * 24 * time.Hour
	caRenewBefore = 365 * 24 * time.Hour
	// servingLife is how long a serving certificate is valid; it is replaced when less than
	// servingRenewBefore is left. Replacing it changes nothing runners trust.
	servingLife        = 365 * 24 * time.Hour
	servingRenewBefore = 30 * 24 * time.Hour
	// certificateAttempts bounds how often a replica reads the Secret again after another
	// replica wrote it first.
	certificateAttempts = 5

	errGetCertificates    = "cannot get the Secret of the artifact endpoint's certificates"
	errWriteCertificates  = "cannot write the Secret of the artifact endpoint's certificates"
	errMakeCertificates   = "cannot make the artifact endpoint's certificates"
	errRacedCertificates  = "other replicas kept writing the Secret of the artifact endpoint's certificates"
	errServingCertificate = "cannot load the artifact endpoint's serving certificate"
)

// Renewal reasons: what a replica found in the Secret that made it write a new authority or
// serving certificate.
const (
	reasonNone        = "no certificate authority"
	reasonCAExpires   = "the certificate authority expires soon"
	reasonExpires     = "the serving certificate expires soon"
	reasonHosts       = "the serving certificate is not for every artifacts host"
	reasonNotSignedBy = "the serving certificate is not signed by the certificate authority"
)

// Certificates keeps the artifact endpoint's certificates in a Secret of the controller's own
// namespace that every replica shares: an authority, whose certificate runner Jobs carry whoever
// made them, and a serving certificate it signs, which the leader serves. A runner whose Job the
// old leader made trusts the new one. The first replica that finds no Secret makes it; any
// replica renews what in it no longer serves (Ensure).
type Certificates struct {
	// Client reads the Secret fresh (Secrets are never cached) and writes it.
	Client client.Client
	// Secret is where the certificates are kept.
	Secret types.NamespacedName
	// Hosts are the names and IPs runners reach the endpoint at: the serving certificate's.
	Hosts []string
	Log   logr.Logger

	now     func() time.Time
	ca      []byte
	serving atomic.Pointer[tls.Certificate]
}

// CA is the authority's certificate (PEM) this replica's runner Jobs carry, as Ensure first read it.
func (c *Certificates) CA() []byte { return c.ca }

// Serving is the certificate to serve: the newest Ensure found signed by CA.
func (c *Certificates) Serving() *tls.Certificate { return c.serving.Load() }

// Ensure reads the Secret, makes it when there is none or renews what in it no longer serves,
// and serves the serving certificate it holds from then on. The authority this replica's Jobs
// carry is the one the first Ensure read: a serving certificate of another authority (an
// administrator deleted the Secret) is not served until the replica restarts, since runners of
// the Jobs it made would refuse it.
func (c *Certificates) Ensure(ctx context.Context) error {
	for range certificateAttempts {
		data, reason, err := c.ensureOnce(ctx)
		if errors.Is(err, errRaced) {
			continue
		}
		if err != nil {
			return err
		}
		if reason != "" {
			c.Log.Info("Wrote the artifact endpoint's certificates", "secret", c.Secret.String(), "reason", reason)
		}
		return c.use(data)
	}
	return errors.New(errRacedCertificates)
}

// errRaced says another replica wrote the Secret between this one's read and write.
var errRaced = errors.New("raced")

// ensureOnce reads the Secret and writes it when it lacks anything or holds what no longer
// serves; it returns the data the Secret holds now and why it wrote it, if it did.
func (c *Certificates) ensureOnce(ctx context.Context) (map[string][]byte, string, error) {
	now := time.Now()
	if c.now != nil {
		now = c.now()
	}
	s := &corev1.Secret{}
	err := c.Client.Get(ctx, c.Secret, s)
	if err != nil && !kerrors.IsNotFound(err) {
		return nil, "", errors.Wrap(err, errGetCertificates)
	}
	found := err == nil
	data, reason, err := renewed(s.Data, c.Hosts, now)
	if err != nil || reason == "" {
		return data, reason, err
	}
	if !found {
		s = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: c.Secret.Namespace, Name: c.Secret.Name,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "modkind"}},
			Type: corev1.SecretTypeTLS,
			Data: data,
		}
		err = c.Client.Create(ctx, s)
	} else {
		s.Data = data
		err = c.Client.Update(ctx, s)
	}
	switch {
	case kerrors.IsAlreadyExists(err) || kerrors.IsConflict(err):
		return nil, "", errRaced
	case err != nil:
		return nil, "", errors.Wrap(err, errWriteCertificates)
	}
	return data, reason, nil
}

// use serves the serving certificate of data when it is signed by the authority this replica's
// Jobs carry, the one the first call found.
func (c *Certificates) use(data map[string][]byte) error {
	if c.ca == nil {
		c.ca = bytes.Clone(data[KeyCACert])
	}
	if !bytes.Equal(c.ca, data[KeyCACert]) {
		c.Log.Info("The artifact endpoint's certificate authority changed since this replica started: it serves the certificate it started with until it restarts",
			"secret", c.Secret.String())
		return nil
	}
	pair, err := tls.X509KeyPair(data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return errors.Wrap(err, errServingCertificate)
	}
	c.serving.Store(&pair)
	return nil
}

// renewed returns the Secret data that serves hosts from now on: data itself, with no reason,
// when it does; otherwise data with a new serving certificate (and, when the authority itself
// is missing, unreadable or expires within caRenewBefore, a new authority), and why.
func renewed(data map[string][]byte, hosts []string, now time.Time) (map[string][]byte, string, error) {
	ca, caErr := parsePair(data[KeyCACert], data[KeyCAKey])
	var reason string
	switch {
	case caErr != nil || !ca.IsCA:
		reason = reasonNone
	case ca.NotAfter.Sub(now) < caRenewBefore:
		reason = reasonCAExpires
	}
	out := map[string][]byte{KeyCACert: data[KeyCACert], KeyCAKey: data[KeyCAKey]}
	if reason != "" {
		var err error
		if out[KeyCACert], out[KeyCAKey], err = artifact.NewCA(caLife); err != nil {
			return nil, "", errors.Wrap(err, errMakeCertificates)
		}
	}
	serving, err := parsePair(data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey])
	issueFor := hosts
	switch {
	case reason != "":
	case err != nil || serving.CheckSignatureFrom(ca) != nil:
		reason = reasonNotSignedBy
	case serving.NotAfter.Sub(now) < servingRenewBefore:
		reason = reasonExpires
	case !servesAll(serving, hosts):
		// Replicas of a rollout that changed --artifacts-hosts would otherwise take turns
		// replacing each other's certificate: the new one is for the names of both.
		reason, issueFor = reasonHosts, union(hosts, serving.DNSNames, serving.IPAddresses)
	default:
		return data, "", nil
	}
	if out[corev1.TLSCertKey], out[corev1.TLSPrivateKeyKey], err = artifact.Issue(out[KeyCACert], out[KeyCAKey], issueFor, servingLife); err != nil {
		return nil, "", errors.Wrap(err, errMakeCertificates)
	}
	return out, reason, nil
}

// parsePair parses a certificate and checks that key belongs to it.
func parsePair(certPEM, keyPEM []byte) (*x509.Certificate, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(pair.Certificate[0])
}

// servesAll reports whether cert is for every one of hosts.
func servesAll(cert *x509.Certificate, hosts []string) bool {
	for _, h := range hosts {
		if cert.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// union is hosts with the names and IPs of a certificate that hosts lack.
func union(hosts, names []string, ips []net.IP) []string {
	out := slices.Clone(hosts)
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, ip := range ips {
		if s := ip.String(); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// artifactsSecret is ref, or the default Secret in the default namespace when ref names none.
func artifactsSecret(ref types.NamespacedName) types.NamespacedName {
	if ref.Name == "" {
		ref.Name = DefaultArtifactsSecret
	}
	if ref.Namespace == "" {
		ref.Namespace = apis.DefaultNamespace
	}
	return ref
}
