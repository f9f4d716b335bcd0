package job

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/modkind/modkind/artifact"
)

var certSecret = types.NamespacedName{Namespace: "modkind-system", Name: "modkind-artifacts-tls"}

// certData is the data of a certificates Secret: an authority valid for caLife and a serving
// certificate it signed for hosts, valid for servingLife.
func certData(t *testing.T, caLife, servingLife time.Duration, hosts ...string) map[string][]byte {
	t.Helper()
	caCert, caKey, err := artifact.NewCA(caLife)
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := artifact.Issue(caCert, caKey, hosts, servingLife)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{KeyCACert: caCert, KeyCAKey: caKey, corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key}
}

// certOutcome is what a test sees of Ensure: whether the authority stayed, the names the
// certificate served is for, whether it chains to the authority the Jobs carry, and the writes.
type certOutcome struct {
	KeptCA   bool
	Hosts    []string
	Verified bool
	Creates  int
	Updates  int
}

// Every replica shares one authority and serving certificate: the first makes the Secret, the
// others read it, and any renews what no longer serves, without changing the authority runners
// trust unless it is missing or about to expire.
func TestCertificatesEnsure(t *testing.T) {
	hosts := []string{"modkind-artifacts.modkind-system.svc", "127.0.0.1"}
	valid := certData(t, caLife, servingLife, hosts...)
	other := certData(t, caLife, servingLife, hosts...)
	withServing := func(base map[string][]byte, life time.Duration, hosts ...string) map[string][]byte {
		out := certData(t, caLife, life, hosts...)
		cert, key, err := artifact.Issue(base[KeyCACert], base[KeyCAKey], hosts, life)
		if err != nil {
			t.Fatal(err)
		}
		out[KeyCACert], out[KeyCAKey], out[corev1.TLSCertKey], out[corev1.TLSPrivateKeyKey] = base[KeyCACert], base[KeyCAKey], cert, key
		return out
	}
	// The Secret's authority, with a serving certificate another authority signed.
	foreign := withServing(valid, servingLife, hosts...)
	foreign[corev1.TLSCertKey], foreign[corev1.TLSPrivateKeyKey] = other[corev1.TLSCertKey], other[corev1.TLSPrivateKeyKey]
	cases := map[string]struct {
		reason string
		data   map[string][]byte
		// race is made by another replica between this one's read and its write.
		race   map[string][]byte
		hosts  []string
		want   certOutcome
		wantCA []byte
	}{
		"None": {
			reason: "The first replica makes the Secret with a new authority and a certificate for its hosts.",
			hosts:  hosts,
			want:   certOutcome{Hosts: sorted(hosts), Verified: true, Creates: 1},
		},
		"Valid": {
			reason: "A replica that finds what serves its hosts uses it and writes nothing.",
			data:   valid,
			hosts:  hosts,
			want:   certOutcome{KeptCA: true, Hosts: sorted(hosts), Verified: true},
		},
		"ServingExpires": {
			reason: "A serving certificate with less than a month left is replaced; the authority stays, so runners of older Jobs still trust the endpoint.",
			data:   withServing(valid, 10*24*time.Hour, hosts...),
			hosts:  hosts,
			want:   certOutcome{KeptCA: true, Hosts: sorted(hosts), Verified: true, Updates: 1},
		},
		"NewHost": {
			reason: "A certificate that lacks a host of --artifacts-hosts is replaced by one for the old names and the new, so that replicas of a rollout do not take turns.",
			data:   valid,
			hosts:  append(slices.Clone(hosts), "modkind-artifacts"),
			want:   certOutcome{KeptCA: true, Hosts: sorted(append(slices.Clone(hosts), "modkind-artifacts")), Verified: true, Updates: 1},
		},
		"ForeignServing": {
			reason: "A serving certificate another authority signed is replaced by one the Secret's authority signs.",
			data:   foreign,
			hosts:  hosts,
			want:   certOutcome{KeptCA: true, Hosts: sorted(hosts), Verified: true, Updates: 1},
		},
		"CAExpires": {
			reason: "An authority with less than a year left is replaced, with a new serving certificate.",
			data:   certData(t, 100*24*time.Hour, 50*24*time.Hour, hosts...),
			hosts:  hosts,
			want:   certOutcome{Hosts: sorted(hosts), Verified: true, Updates: 1},
		},
		"Unreadable": {
			reason: "A Secret whose authority cannot be read is made again.",
			data:   map[string][]byte{KeyCACert: []byte("garbage"), corev1.TLSCertKey: valid[corev1.TLSCertKey], corev1.TLSPrivateKeyKey: valid[corev1.TLSPrivateKeyKey]},
			hosts:  hosts,
			want:   certOutcome{Hosts: sorted(hosts), Verified: true, Updates: 1},
		},
		"CreateRace": {
			reason: "Two replicas that both found none: the one whose create loses reads and uses the other's, writing nothing.",
			race:   other,
			hosts:  hosts,
			want:   certOutcome{Hosts: sorted(hosts), Verified: true},
			wantCA: other[KeyCACert],
		},
		"UpdateRace": {
			reason: "A replica whose renewal conflicts with another's reads the Secret again and uses the other's renewal, writing nothing.",
			data:   withServing(valid, 10*24*time.Hour, hosts...),
			race:   withServing(valid, servingLife, hosts...),
			hosts:  hosts,
			want:   certOutcome{KeptCA: true, Hosts: sorted(hosts), Verified: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, writes := certClient(t, tc.data, tc.race)
			certs := &Certificates{Client: c, Secret: certSecret, Hosts: tc.hosts, Log: logr.Discard()}
			if err := certs.Ensure(context.Background()); err != nil {
				t.Fatalf("%s\nEnsure: %v", tc.reason, err)
			}
			got := outcomeOf(t, certs, tc.data)
			got.Creates, got.Updates = writes.creates, writes.updates
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
			if tc.wantCA != nil && !bytes.Equal(tc.wantCA, certs.CA()) {
				t.Errorf("%s\nthe authority is not the one the other replica made", tc.reason)
			}
			stored := &corev1.Secret{}
			if err := c.Get(context.Background(), certSecret, stored); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(stored.Data[KeyCACert], certs.CA()) {
				t.Errorf("%s\nthe authority Jobs carry is not the Secret's", tc.reason)
			}
		})
	}
}

// writes counts this replica's Secret writes that the fake API server took.
type writes struct{ creates, updates int }

// certClient is a fake API server holding the certificates Secret with data (none when nil).
// With race set, another replica writes a Secret of that data just before this one's first write,
// which then fails as the API server would fail it.
func certClient(t *testing.T, data, race map[string][]byte) (client.Client, *writes) {
	t.Helper()
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	b := fake.NewClientBuilder().WithScheme(s)
	if data != nil {
		b = b.WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: certSecret.Namespace, Name: certSecret.Name},
			Type: corev1.SecretTypeTLS, Data: data})
	}
	w := &writes{}
	raced := race == nil
	gr := schema.GroupResource{Resource: "secrets"}
	b = b.WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if !raced {
				raced = true
				other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: certSecret.Namespace, Name: certSecret.Name}, Type: corev1.SecretTypeTLS, Data: race}
				if err := c.Create(ctx, other); err != nil {
					return err
				}
				return kerrors.NewAlreadyExists(gr, obj.GetName())
			}
			w.creates++
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if !raced {
				raced = true
				other := &corev1.Secret{}
				if err := c.Get(ctx, certSecret, other); err != nil {
					return err
				}
				other.Data = race
				if err := c.Update(ctx, other); err != nil {
					return err
				}
				return kerrors.NewConflict(gr, obj.GetName(), nil)
			}
			w.updates++
			return c.Update(ctx, obj, opts...)
		},
	})
	return b.Build(), w
}

// outcomeOf is what Ensure left: whether the authority is the one of before, and what the
// certificate it serves is for and chains to.
func outcomeOf(t *testing.T, certs *Certificates, before map[string][]byte) certOutcome {
	t.Helper()
	serving := certs.Serving()
	if serving == nil {
		t.Fatal("Ensure serves no certificate")
	}
	leaf, err := x509.ParseCertificate(serving.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certs.CA())
	var hosts []string
	hosts = append(hosts, leaf.DNSNames...)
	for _, ip := range leaf.IPAddresses {
		hosts = append(hosts, ip.String())
	}
	_, verr := leaf.Verify(x509.VerifyOptions{Roots: pool})
	block, _ := pem.Decode(certs.CA())
	return certOutcome{
		KeptCA:   before != nil && block != nil && bytes.Equal(before[KeyCACert], certs.CA()),
		Hosts:    sorted(hosts),
		Verified: verr == nil,
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// A replica keeps serving certificates of the authority its Jobs carry: after an administrator
// replaced the Secret, it serves what it served before until it restarts, and its runners keep
// trusting it.
func TestCertificatesKeepTheirAuthority(t *testing.T) {
	hosts := []string{"127.0.0.1"}
	c, _ := certClient(t, certData(t, caLife, servingLife, hosts...), nil)
	certs := &Certificates{Client: c, Secret: certSecret, Hosts: hosts, Log: logr.Discard()}
	if err := certs.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	ca, served := certs.CA(), certs.Serving()
	if err := c.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: certSecret.Namespace, Name: certSecret.Name}}); err != nil {
		t.Fatal(err)
	}
	if err := certs.Ensure(context.Background()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ca, certs.CA()); diff != "" {
		t.Errorf("the authority Jobs carry changed: -want, +got:\n%s", diff)
	}
	if certs.Serving() != served {
		t.Errorf("a certificate of another authority is served")
	}
}
