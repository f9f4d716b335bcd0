package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/cmd/cluster"
	"github.com/modkind/modkind/dashboard"
)

// dashboardCommand answers `modkind dashboard`: it serves the fleet dashboard on a loopback
// address with the user's own kubeconfig, and prints the URL to open (with its one-time token).
func dashboardCommand(args []string, out io.Writer) error {
	fs := newCommandFlags("dashboard", "modkind dashboard [--address 127.0.0.1:0] [--read-only] [-n namespace] [--kubeconfig file] [--context name]")
	var cf cluster.Flags
	cf.Register(fs.FlagSet, true)
	address := fs.String("address", "127.0.0.1:0", "where to serve: a loopback address only (127.0.0.1, [::1], localhost) and a port, 0 for a free one")
	readOnly := fs.Bool("read-only", false, "serve no write route: no approve, promote, pause or undo")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return fs.fail("want no arguments, got %d", len(pos))
	}
	l, err := dashboard.Listen(*address)
	if err != nil {
		return err
	}
	s, err := apis.Scheme()
	if err != nil {
		return err
	}
	found, err := cf.Resolve()
	if err != nil {
		return err
	}
	c, err := client.NewWithWatch(found.Config, client.Options{Scheme: s})
	if err != nil {
		return err
	}
	pods, err := kubernetes.NewForConfig(found.Config)
	if err != nil {
		return err
	}
	logs := func(ctx context.Context, namespace, pod string, tailLines int64) (io.ReadCloser, error) {
		return pods.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{TailLines: &tailLines}).Stream(ctx)
	}
	d, err := dashboard.New(&dashboard.Cluster{Client: c, Logs: logs, Namespace: cf.Namespace}, l.Addr().String(), dashboard.Options{ReadOnly: *readOnly, Namespace: cf.Namespace})
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(out, "modkind dashboard: open %s\n", d.URL()); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return d.Serve(ctx, l)
}
