package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
)

// kubeconfig writes a kubeconfig whose contexts each name a server and a namespace, the first
// current, and returns its path.
func kubeconfig(t *testing.T, path string, contexts ...string) string {
	t.Helper()
	s := "apiVersion: v1\nkind: Config\ncurrent-context: " + contexts[0] + "\nclusters:\n"
	for _, c := range contexts {
		s += "- name: " + c + "\n  cluster:\n    server: https://" + c + ".example:6443\n"
	}
	s += "contexts:\n"
	for _, c := range contexts {
		s += "- name: " + c + "\n  context:\n    cluster: " + c + "\n    user: u\n    namespace: ns-" + c + "\n"
	}
	s += "users:\n- name: u\n  user:\n    token: t\n"
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The cluster is found where kubectl and controller-runtime look, in their order: --kubeconfig,
// KUBECONFIG, the in-cluster configuration, ~/.kube/config; --context picks a context of the
// kubeconfig found, and -n the namespace.
func TestResolveOrder(t *testing.T) {
	type want struct {
		Host, Namespace, From string
		NoCluster             bool
	}
	inPod := &rest.Config{Host: "https://10.0.0.1:443"}
	cases := map[string]struct {
		reason string
		// flags, and which sources exist: a kubeconfig at --kubeconfig, in KUBECONFIG, in
		// ~/.kube/config, and the pod's environment.
		flags                          Flags
		explicit, env, home, inCluster bool
		want                           want
	}{
		"Explicit": {
			reason: "--kubeconfig wins over every other source",
			flags:  Flags{Kubeconfig: "explicit"}, explicit: true, env: true, home: true, inCluster: true,
			want: want{Host: "https://explicit.example:6443", Namespace: "ns-explicit", From: "--kubeconfig explicit"},
		},
		"Env": {
			reason: "KUBECONFIG comes next, before the pod's configuration and ~/.kube/config",
			env:    true, home: true, inCluster: true,
			want: want{Host: "https://env.example:6443", Namespace: "ns-env", From: "KUBECONFIG=env"},
		},
		"InCluster": {
			reason: "in a pod, without a kubeconfig named, the pod's configuration, before ~/.kube/config",
			home:   true, inCluster: true,
			want: want{Host: inPod.Host, Namespace: "pod-ns", From: "the in-cluster configuration"},
		},
		"Home": {
			reason: "~/.kube/config last: modkind reads it as kubectl does, and starts nothing in its place",
			home:   true,
			want:   want{Host: "https://home.example:6443", Namespace: "ns-home", From: "HOME/.kube/config"},
		},
		"ContextSkipsInCluster": {
			reason: "--context names a kubeconfig context, so the pod's configuration is passed over",
			flags:  Flags{Context: "other"}, home: true, inCluster: true,
			want: want{Host: "https://other.example:6443", Namespace: "ns-other", From: "HOME/.kube/config"},
		},
		"ContextOfEnv": {
			reason: "--context picks a context of the files KUBECONFIG lists",
			flags:  Flags{Context: "other"}, env: true,
			want: want{Host: "https://other.example:6443", Namespace: "ns-other", From: "KUBECONFIG=env"},
		},
		"Namespace": {
			reason: "-n wins over the context's namespace",
			flags:  Flags{Namespace: "mine"}, home: true,
			want: want{Host: "https://home.example:6443", Namespace: "mine", From: "HOME/.kube/config"},
		},
		"NamespaceInCluster": {
			reason: "-n wins over the pod's namespace",
			flags:  Flags{Namespace: "mine"}, inCluster: true,
			want: want{Host: inPod.Host, Namespace: "mine", From: "the in-cluster configuration"},
		},
		"Nothing": {
			reason: "no source at all is an error, not a guess",
			want:   want{NoCluster: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			home := filepath.Join(dir, "home")
			t.Setenv("HOME", home)
			t.Chdir(dir)
			t.Setenv(EnvKubeconfig, "")
			t.Setenv("KUBERNETES_SERVICE_HOST", "")
			t.Setenv("POD_NAMESPACE", "pod-ns")
			if tc.explicit {
				kubeconfig(t, "explicit", "explicit")
			}
			if tc.env {
				t.Setenv(EnvKubeconfig, kubeconfig(t, "env", "env", "other"))
			}
			if tc.home {
				kubeconfig(t, filepath.Join(home, ".kube", "config"), "home", "other")
			}
			if tc.inCluster {
				t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
			}
			found, err := tc.flags.resolve(func() (*rest.Config, error) { return inPod, nil })
			var got want
			switch {
			case errors.Is(err, ErrNoCluster):
				got.NoCluster = true
			case err != nil:
				t.Fatalf("%s\nresolve: %v", tc.reason, err)
			default:
				got = want{Host: found.Config.Host, Namespace: found.Namespace, From: found.From}
				if rel, err := filepath.Rel(home, got.From); err == nil && filepath.IsLocal(rel) {
					got.From = filepath.Join("HOME", rel)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// Where no source names a cluster, the error says each place looked at.
func TestNoClusterError(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(EnvKubeconfig, "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, err := (&Flags{}).resolve(func() (*rest.Config, error) { return nil, errors.New("not in a pod") })
	want := "no cluster found: no --kubeconfig, KUBECONFIG is not set, not in a pod (KUBERNETES_SERVICE_HOST is not set) and no " + filepath.Join(home, ".kube", "config")
	if err == nil || err.Error() != want {
		t.Errorf("resolve without a cluster: want error %q, got %v", want, err)
	}
}

// A kubeconfig named but unreadable is an error that names it, not a fall back to another source.
func TestExplicitMissing(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	kubeconfig(t, filepath.Join(os.Getenv("HOME"), ".kube", "config"), "home")
	missing := filepath.Join(t.TempDir(), "none")
	_, err := (&Flags{Kubeconfig: missing}).Resolve()
	if err == nil || errors.Is(err, ErrNoCluster) {
		t.Fatalf("--kubeconfig %s, which does not exist: want an error reading it, got %v", missing, err)
	}
	if want := "--kubeconfig " + missing; !cmp.Equal(want, err.Error()[:len(want)]) {
		t.Errorf("the error names %q: got %v", want, err)
	}
}
