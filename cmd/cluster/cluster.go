// Package cluster finds the cluster every mode of modkind runs against, the one way for all of
// them (the controller, each CLI command, the runner pod): the flags that name it (--kubeconfig,
// --context, and for the commands that read an instance -n/--namespace), their resolution where
// kubectl looks, in controller-runtime's order, and a client for the result. It also reads the
// namespace/name references those modes take as flags.
package cluster

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/homedir"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EnvKubeconfig is the environment variable that lists kubeconfig files, as for kubectl.
const EnvKubeconfig = clientcmd.RecommendedConfigPathEnvVar

// Flags name a cluster as kubectl's flags do.
type Flags struct {
	// Kubeconfig is --kubeconfig: a kubeconfig file that wins over every other source.
	Kubeconfig string
	// Context is --context: the kubeconfig context to use; the current one when empty.
	Context string
	// Namespace is -n/--namespace (commands that name an instance): the context's when empty.
	Namespace string
}

// Register adds --kubeconfig and --context to fs, and -n/--namespace when withNamespace.
func (f *Flags) Register(fs *flag.FlagSet, withNamespace bool) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig of the cluster; else "+EnvKubeconfig+", else the in-cluster config, else ~/.kube/config")
	fs.StringVar(&f.Context, "context", "", "kubeconfig context to use; the current context when empty")
	if withNamespace {
		fs.StringVar(&f.Namespace, "namespace", "", "namespace of the instance; the kubeconfig context's when empty")
		fs.StringVar(&f.Namespace, "n", "", "short for --namespace")
	}
}

// Found is the cluster the flags resolved to.
type Found struct {
	Config *rest.Config
	// Namespace is the one to use: --namespace, else the context's (in a pod, the pod's), else
	// default.
	Namespace string
	// From says where the configuration came from, for messages.
	From string
}

// ErrNoCluster is the error of Resolve when no source names a cluster.
var ErrNoCluster = errors.New("no cluster found")

// noClusterError says what Resolve looked for, in order.
type noClusterError struct{ home string }

func (e *noClusterError) Error() string {
	return fmt.Sprintf("%v: no --kubeconfig, %s is not set, not in a pod (KUBERNETES_SERVICE_HOST is not set) and no %s", ErrNoCluster, EnvKubeconfig, e.home)
}

func (e *noClusterError) Unwrap() error { return ErrNoCluster }

// Resolve finds the cluster the flags name, looking where kubectl and controller-runtime look, in
// this order: --kubeconfig; the files KUBECONFIG lists; the pod's in-cluster configuration (unless
// --context names a kubeconfig context); ~/.kube/config. When none is there it returns an error
// that wraps ErrNoCluster and says what it looked for.
func (f *Flags) Resolve() (*Found, error) {
	return f.resolve(rest.InClusterConfig)
}

// resolve is Resolve with the in-cluster configuration read by inCluster, for tests.
func (f *Flags) resolve(inCluster func() (*rest.Config, error)) (*Found, error) {
	switch {
	case f.Kubeconfig != "":
		return f.fromFiles(&clientcmd.ClientConfigLoadingRules{ExplicitPath: f.Kubeconfig}, "--kubeconfig "+f.Kubeconfig)
	case os.Getenv(EnvKubeconfig) != "":
		return f.fromFiles(clientcmd.NewDefaultClientConfigLoadingRules(), EnvKubeconfig+"="+os.Getenv(EnvKubeconfig))
	}
	if f.Context == "" && os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		cfg, err := inCluster()
		if err != nil {
			return nil, fmt.Errorf("in-cluster configuration: %w", err)
		}
		ns := f.Namespace
		if ns == "" {
			ns = PodNamespace()
		}
		if ns == "" {
			ns = metav1.NamespaceDefault
		}
		return &Found{Config: cfg, Namespace: ns, From: "the in-cluster configuration"}, nil
	}
	home := filepath.Join(homedir.HomeDir(), clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)
	if _, err := os.Stat(home); err != nil {
		return nil, &noClusterError{home: home}
	}
	return f.fromFiles(&clientcmd.ClientConfigLoadingRules{ExplicitPath: home}, home)
}

// fromFiles reads the kubeconfig files of rules with the flags' context and namespace.
func (f *Flags) fromFiles(rules *clientcmd.ClientConfigLoadingRules, from string) (*Found, error) {
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	overrides.Context.Namespace = f.Namespace
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	return &Found{Config: cfg, Namespace: ns, From: from}, nil
}

// PodNamespace is the namespace of the pod this runs in: POD_NAMESPACE (the chart sets it from
// the downward API), else its service account's; empty outside a pod.
func PodNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile(ServiceAccountNamespaceFile); err == nil {
		return strings.TrimSpace(string(b))
	}
	return ""
}

// ServiceAccountNamespaceFile holds the namespace of a pod's service account.
const ServiceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Client resolves the flags and returns a client for the cluster, with scheme (client-go's
// when nil), and what Resolve found.
func (f *Flags) Client(scheme *runtime.Scheme) (client.Client, *Found, error) {
	found, err := f.Resolve()
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(found.Config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, err
	}
	return c, found, nil
}

// ParseNamespacedName reads a namespace/name flag value.
func ParseNamespacedName(s string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("want namespace/name, got %q", s)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}
