package modules

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/module"
)

func TestSourceCredentials(t *testing.T) {
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "modkind-system", Name: "git"},
		Data: map[string][]byte{
			"username": []byte("bot"), "token": []byte("t0ken"), "bearerToken": []byte("b3arer"),
			"sshPrivateKey": []byte("KEY"), "known_hosts": []byte("HOSTS"),
			"TF_TOKEN_registry_example_org": []byte("r3g"), "unrelated": []byte("x"),
		},
	}
	tenant := sec.DeepCopy()
	tenant.Namespace = "team-a"
	r := &ModuleReconciler{apiReader: fake.NewClientBuilder().WithObjects(sec, tenant).Build(), credentialsNamespaces: []string{"modkind-system"}}
	got, err := r.credentials(context.Background(), &v1alpha1.SecretReference{Namespace: "modkind-system", Name: "git"})
	if err != nil {
		t.Fatal(err)
	}
	want := module.Credentials{
		GitUsername: "bot", GitToken: "t0ken", GitBearerToken: "b3arer",
		GitSSHPrivateKey: []byte("KEY"), GitSSHKnownHosts: []byte("HOSTS"),
		RegistryTokens: map[string]string{"TF_TOKEN_registry_example_org": "r3g"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("each documented key of the Secret must reach the fetcher: -want +got:\n%s", diff)
	}
	if _, err := r.credentials(context.Background(), &v1alpha1.SecretReference{Namespace: "modkind-system", Name: "absent"}); err == nil {
		t.Errorf("a missing credentials Secret must be an error naming it")
	}
	if _, err := r.credentials(context.Background(), &v1alpha1.SecretReference{Namespace: "team-a", Name: "git"}); err == nil {
		t.Errorf("a credentials Secret outside the credentials namespaces must be refused")
	}
	if got, err := r.credentials(context.Background(), nil); err != nil || !cmp.Equal(got, module.Credentials{}) {
		t.Errorf("no Secret named means no credentials, got %v, %v", got, err)
	}
}
