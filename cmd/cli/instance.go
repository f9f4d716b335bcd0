package cli

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/cmd/cluster"
	"github.com/modkind/modkind/kind"
)

// instanceRef is an instance named on the command line as <kind>/<name>, resolved in a cluster.
type instanceRef struct {
	gvk    schema.GroupVersionKind
	key    types.NamespacedName
	client client.Client
}

// resolve connects to the cluster and finds the kind of arg (<kind>/<name>, the kind as a
// resource name such as traces or traces.example.org, or as Kind.group) through discovery.
func resolve(cf *cluster.Flags, fs *flagSet, arg string) (*instanceRef, error) {
	kindArg, name, ok := strings.Cut(arg, "/")
	if !ok || kindArg == "" || name == "" || strings.Contains(name, "/") {
		return nil, fs.fail("want <kind>/<name>, such as traces.example.org/web, got %q", arg)
	}
	found, err := cf.Resolve()
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(found.Config)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)), dc, nil)
	gvk, err := kind.ResolveKind(mapper, kindArg)
	if err != nil {
		return nil, err
	}
	cl, err := client.New(found.Config, client.Options{Mapper: mapper})
	if err != nil {
		return nil, err
	}
	return &instanceRef{gvk: gvk, key: types.NamespacedName{Namespace: found.Namespace, Name: name}, client: cl}, nil
}

func (r *instanceRef) String() string {
	return fmt.Sprintf("%s %s/%s", r.gvk.GroupKind(), r.key.Namespace, r.key.Name)
}

// oneInstance parses the command line of a command that names one instance, flags anywhere,
// and resolves the instance in the cluster cf names. It returns the instance as named too.
func oneInstance(fs *flagSet, cf *cluster.Flags, args []string) (*instanceRef, string, error) {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, "", err
	}
	if len(pos) != 1 {
		return nil, "", fs.fail("want one instance as <kind>/<name>, got %d arguments", len(pos))
	}
	ref, err := resolve(cf, fs, pos[0])
	return ref, pos[0], err
}
