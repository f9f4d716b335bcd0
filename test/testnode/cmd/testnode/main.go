// Command testnode joins a cluster as a node whose pods run as local processes, for tests that run
// Jobs for real: `testnode --kubeconfig k --root dir --image modkind=/path/to/modkind`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/modkind/modkind/test/testnode"
)

// pairs is a repeatable key=value flag.
type pairs map[string]string

func (p pairs) String() string { return fmt.Sprint(map[string]string(p)) }

func (p pairs) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not key=value", s)
	}
	p[k] = v
	return nil
}

func main() {
	cfg := testnode.Config{Images: pairs{}, Labels: pairs{}}
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the node's identity")
	flag.StringVar(&cfg.Name, "name", "testnode", "name of the Node")
	flag.StringVar(&cfg.Root, "root", "", "directory for the pods' files")
	flag.Var(pairs(cfg.Images), "image", "image=executable standing for its entrypoint (repeatable)")
	flag.Var(pairs(cfg.Labels), "label", "label=value of the Node (repeatable)")
	flag.Parse()
	rest, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testnode:", err)
		os.Exit(2)
	}
	cfg.REST = rest
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	node, err := testnode.Start(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testnode:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	if err := node.Wait(); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "testnode:", err)
		os.Exit(1)
	}
}
