package instance

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// The controller checks a ProviderConfig again, whatever admission let through (a CRD installed
// by an older version, or edited): each abuse is refused with a message naming it.
func TestProviderConfigResolverRefuses(t *testing.T) {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	secret := func(ns string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, Data: map[string][]byte{"k": []byte("v4lue"), "p": []byte("/var/run/secrets/v4lue")}}
	}
	ref := v1alpha1.SecretKeySelector{Name: "creds", Key: "k"}
	cases := map[string]struct {
		reason string
		spec   v1alpha1.ProviderConfigSpec
		want   string
	}{
		"EnvPath":         {"PATH chooses the binaries terraform runs", v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "PATH", Value: ptr.To("/tmp")}}}, "steers the tools"},
		"EnvTF":           {"TF_* steers terraform", v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "TF_CLI_CONFIG_FILE", Value: ptr.To("x")}}}, "steers the tools"},
		"EnvLowerProxy":   {"proxies are read in lower case too", v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "https_proxy", Value: ptr.To("http://evil")}}}, "steers the tools"},
		"EnvLoader":       {"LD_PRELOAD loads code into every process", v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "LD_PRELOAD", Value: ptr.To("x.so")}}}, "steers the tools"},
		"EnvKubeconfig":   {"a kubeconfig can run an exec plugin", v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "KUBECONFIG", SecretKeyRef: &ref}}}, "steers the tools"},
		"EnvAWSConfig":    {"an AWS config file can run credential_process", v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "AWS_CONFIG_FILE", Value: ptr.To("files/c")}}}, "steers the tools"},
		"EnvTFConfig":     {"TERRAFORM_CONFIG names terraform's CLI configuration, which says where providers come from", v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "TERRAFORM_CONFIG", Value: ptr.To("files/cli")}}}, "steers the tools"},
		"EnvXDGData":      {"terraform installs providers found under $XDG_DATA_HOME/terraform/plugins", v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "XDG_DATA_HOME", Value: ptr.To("files/x")}}}, "steers the tools"},
		"EnvValueToken":   {"a variable pointing a provider at the controller's token", v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "AWS_WEB_IDENTITY_TOKEN_FILE", Value: ptr.To("/var/run/secrets/kubernetes.io/serviceaccount/token")}}}, "AWS_WEB_IDENTITY_TOKEN_FILE names a path outside"},
		"EnvValueClimb":   {"a variable climbing out of the run", v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "GOOGLE_APPLICATION_CREDENTIALS", Value: ptr.To("files/../../other/files/sa.json")}}}, "names a path outside"},
		"EnvValueSecret":  {"a path read from a Secret is checked as well, and not shown", v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "CREDS_FILE", SecretKeyRef: &v1alpha1.SecretKeySelector{Name: "creds", Key: "p"}}}}, "CREDS_FILE names a path outside"},
		"ProviderKeyPath": {"an object key naming a file", v1alpha1.ProviderConfigSpec{Providers: &runtime.RawExtension{Raw: []byte(`{"x":{"tags":{"/etc/hostname":"v"}}}`)}}, "outside the run's directory"},
		"FileTerraform":   {"a .tf file would be configuration", v1alpha1.ProviderConfigSpec{Files: []v1alpha1.File{{Path: "evil.tf", SecretKeyRef: ref}}}, "named like a Terraform"},
		"FileTFJSON":      {"main.tf.json would replace the root module", v1alpha1.ProviderConfigSpec{Files: []v1alpha1.File{{Path: "main.tf.json", SecretKeyRef: ref}}}, "named like a Terraform"},
		"FileState":       {"the state file", v1alpha1.ProviderConfigSpec{Files: []v1alpha1.File{{Path: "terraform.tfstate", SecretKeyRef: ref}}}, "named like a Terraform"},
		"FileDotDir":      {".terraform holds providers", v1alpha1.ProviderConfigSpec{Files: []v1alpha1.File{{Path: ".terraform/providers/x", SecretKeyRef: ref}}}, "must be relative"},
		"FileClimb":       {"climbing out of the files directory", v1alpha1.ProviderConfigSpec{Files: []v1alpha1.File{{Path: "a/../../main.tf.json", SecretKeyRef: ref}}}, "must be relative"},
		"FileAbsolute":    {"an absolute path", v1alpha1.ProviderConfigSpec{Files: []v1alpha1.File{{Path: "/etc/passwd", SecretKeyRef: ref}}}, "must be relative"},
		"ProviderPath":    {"a provider reading the controller's files", v1alpha1.ProviderConfigSpec{Providers: &runtime.RawExtension{Raw: []byte(`{"google":{"credentials":"/var/run/secrets/kubernetes.io/serviceaccount/token"}}`)}}, "outside the run's directory"},
		"ProviderClimb":   {"a provider reading another instance's work directory", v1alpha1.ProviderConfigSpec{Providers: &runtime.RawExtension{Raw: []byte(`{"things":[{"directory":"files/../../../other"}]}`)}}, "outside the run's directory"},
		"ProviderHome":    {"a path from the home directory", v1alpha1.ProviderConfigSpec{Providers: &runtime.RawExtension{Raw: []byte(`{"aws":{"shared_config_files":["~/.aws/config"]}}`)}}, "outside the run's directory"},
		"ProviderFileURL": {"a file:// URL", v1alpha1.ProviderConfigSpec{Providers: &runtime.RawExtension{Raw: []byte(`{"x":{"endpoint":"file:///etc/shadow"}}`)}}, "outside the run's directory"},
		"SecretElsewhere": {"a ProviderConfig reads its own namespace's Secrets only", v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "TOKEN", SecretKeyRef: &v1alpha1.SecretKeySelector{Name: "creds", Namespace: "modkind-system", Key: "k"}}}}, "its own namespace only"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "pc"}, Spec: tc.spec}
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(pc, secret("team-a"), secret("modkind-system")).Build()
			r := &ProviderConfigResolver{Client: c, CredentialsNamespaces: []string{"modkind-system"}}
			_, err := r.Resolve(context.Background(), "team-a", &ProviderConfigRef{Name: "pc"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: want an error containing %q, got %v", tc.reason, tc.want, err)
			}
			if err != nil && strings.Contains(err.Error(), "v4lue") {
				t.Errorf("%s: the error shows a Secret's value: %v", tc.reason, err)
			}
		})
	}
}

// A tenant's provider block reaches Terraform as literal values: templates are escaped, so
// ${file(...)} is that string and is never evaluated. A ClusterProviderConfig, written by cluster
// admins, keeps its expressions, and takes Secrets only from the credentials namespaces.
func TestProviderConfigLiteralsAndClusterExpressions(t *testing.T) {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	block := `{"things":{"directory":"${file(\"/etc/hostname\")}","tags":{"a":"%{ if true }x%{ endif }","${file(\"files/k\")}":"k"},"n":3,"list":["files/sa.json"]}}`
	pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "pc"},
		Spec: v1alpha1.ProviderConfigSpec{Providers: &runtime.RawExtension{Raw: []byte(block)}}}
	cpc := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "shared"},
		Spec: v1alpha1.ClusterProviderConfigSpec{Namespaces: []string{"team-a"}, ProviderConfigSpec: v1alpha1.ProviderConfigSpec{
			Providers: &runtime.RawExtension{Raw: []byte(`{"things":{"directory":"${path.root}/x"}}`)},
			Env:       []v1alpha1.EnvVar{{Name: "TOKEN", SecretKeyRef: &v1alpha1.SecretKeySelector{Name: "creds", Namespace: "modkind-system", Key: "k"}}},
		}}}
	foreign := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "foreign"},
		Spec: v1alpha1.ClusterProviderConfigSpec{Namespaces: []string{"*"}, ProviderConfigSpec: v1alpha1.ProviderConfigSpec{
			Env: []v1alpha1.EnvVar{{Name: "TOKEN", SecretKeyRef: &v1alpha1.SecretKeySelector{Name: "creds", Namespace: "team-b", Key: "k"}}}}}}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "modkind-system", Name: "creds"}, Data: map[string][]byte{"k": []byte("v")}}
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "creds"}, Data: map[string][]byte{"k": []byte("w")}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(pc, cpc, foreign, sec, other).Build()
	r := &ProviderConfigResolver{Client: c, CredentialsNamespaces: []string{"modkind-system"}}

	got, err := r.Resolve(context.Background(), "team-a", &ProviderConfigRef{Kind: "ProviderConfig", Name: "pc"})
	if err != nil {
		t.Fatal(err)
	}
	var rendered, want any
	_ = json.Unmarshal(got.Providers, &rendered)
	_ = json.Unmarshal([]byte(`{"things":{"directory":"$${file(\"/etc/hostname\")}","tags":{"a":"%%{ if true }x%%{ endif }","$${file(\"files/k\")}":"k"},"n":3,"list":["files/sa.json"]}}`), &want)
	if diff := cmp.Diff(want, rendered); diff != "" {
		t.Errorf("a tenant's provider block must be rendered as literals: -want +got:\n%s", diff)
	}

	got, err = r.Resolve(context.Background(), "team-a", &ProviderConfigRef{Kind: "ClusterProviderConfig", Name: "shared"})
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Providers) != `{"things":{"directory":"${path.root}/x"}}` || got.Env["TOKEN"] != "v" {
		t.Errorf("a ClusterProviderConfig keeps its expressions and reads its Secret: %s, %v", got.Providers, got.Env)
	}
	if _, err := r.Resolve(context.Background(), "team-b", &ProviderConfigRef{Kind: "ClusterProviderConfig", Name: "shared"}); err == nil ||
		!strings.Contains(err.Error(), "is not shared with namespace team-b") {
		t.Errorf("a namespace the ClusterProviderConfig does not list must not use its credentials, got %v", err)
	}
	if _, err := r.Resolve(context.Background(), "team-a", &ProviderConfigRef{Kind: "ClusterProviderConfig", Name: "foreign"}); err == nil ||
		!strings.Contains(err.Error(), "outside the namespaces cluster credentials are read from") {
		t.Errorf("a ClusterProviderConfig must not read a tenant namespace's Secret, got %v", err)
	}
}

// An environment value is as often a secret as a path: only a value that could name a file outside
// the run is refused, not an access key that happens to start with a slash.
func TestEnvPathOutside(t *testing.T) {
	cases := map[string]struct {
		reason string
		value  string
		want   bool
	}{
		"Relative":    {"a file the ProviderConfig wrote", "files/creds/sa.json", false},
		"Plain":       {"an ordinary value", "eu-west-1", false},
		"URL":         {"an endpoint", "https://sts.example.com/path", false},
		"SlashSecret": {"a key that starts with a slash names nothing on this machine", "/q8Zr+Tk2pW/xY9", false},
		"Token":       {"the controller's service account token", "/var/run/secrets/kubernetes.io/serviceaccount/token", true},
		"Proc":        {"another process's environment", "/proc/1/environ", true},
		"Root":        {"the root directory", "/", true},
		"DoubleSlash": {"a root written twice", "//etc/passwd", true},
		"Climb":       {"a .. segment", "files/../../x", true},
		"Home":        {"a home directory", "~/.aws/credentials", true},
		"FileURL":     {"a file:// URL", "file:///etc/shadow", true},
		"RootDotDot":  {"a climb from the root", "/../etc", true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := envPathOutside(tc.value, []string{"/tmp/modkind"}); got != tc.want {
				t.Errorf("%s: envPathOutside(%q) = %v, want %v", tc.reason, tc.value, got, tc.want)
			}
		})
	}
}

// A setup from a ClusterProviderConfig that sets environment variables or files, literal or from
// Secrets, carries a cluster admin's credentials, which never go to a runner pod; one that sets
// only a provider block and the runner does not, nor does a namespace's ProviderConfig.
func TestClusterCredentials(t *testing.T) {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	_ = v1alpha1.AddToScheme(s)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "modkind-system", Name: "creds"}, Data: map[string][]byte{"k": []byte("v")}}
	cluster := func(name string, spec v1alpha1.ProviderConfigSpec) *v1alpha1.ClusterProviderConfig {
		return &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ClusterProviderConfigSpec{Namespaces: []string{"*"}, ProviderConfigSpec: spec}}
	}
	objs := []client.Object{sec,
		cluster("literal", v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "CLOUD_TOKEN", Value: ptr.To("t0ken")}}}),
		cluster("from-secret", v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "CLOUD_TOKEN", SecretKeyRef: &v1alpha1.SecretKeySelector{Name: "creds", Namespace: "modkind-system", Key: "k"}}}}),
		cluster("file", v1alpha1.ProviderConfigSpec{Files: []v1alpha1.File{{Path: "sa.json", SecretKeyRef: v1alpha1.SecretKeySelector{Name: "creds", Namespace: "modkind-system", Key: "k"}}}}),
		cluster("block", v1alpha1.ProviderConfigSpec{Providers: &runtime.RawExtension{Raw: []byte(`{"aws":{"region":"eu-west-1"}}`)},
			Runner: &v1alpha1.RunnerSpec{ServiceAccountName: "terraform"}}),
		&v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "own"},
			Spec: v1alpha1.ProviderConfigSpec{Env: []v1alpha1.EnvVar{{Name: "CLOUD_TOKEN", Value: ptr.To("t0ken")}}}},
	}
	r := &ProviderConfigResolver{Client: fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build(), CredentialsNamespaces: []string{"modkind-system"}}
	for _, tc := range []struct {
		reason string
		ref    ProviderConfigRef
		want   string
	}{
		{"A literal value of a cluster admin's is as much a credential as a Secret's.", ProviderConfigRef{Kind: "ClusterProviderConfig", Name: "literal"}, "literal"},
		{"A value from a credentials namespace's Secret.", ProviderConfigRef{Kind: "ClusterProviderConfig", Name: "from-secret"}, "from-secret"},
		{"A file.", ProviderConfigRef{Kind: "ClusterProviderConfig", Name: "file"}, "file"},
		{"A provider block and a runner template hold no credential of the controller's.", ProviderConfigRef{Kind: "ClusterProviderConfig", Name: "block"}, ""},
		{"A namespace's own ProviderConfig is the namespace's.", ProviderConfigRef{Name: "own"}, ""},
	} {
		got, err := r.Resolve(context.Background(), "team-a", &tc.ref)
		if err != nil {
			t.Fatal(err)
		}
		if got.ClusterCredentials != tc.want {
			t.Errorf("%s\nClusterCredentials: want %q, got %q", tc.reason, tc.want, got.ClusterCredentials)
		}
	}
}
