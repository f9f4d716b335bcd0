package runner

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor/job"
	runnerpod "github.com/modkind/modkind/executor/runner"
	"github.com/modkind/modkind/runs"
	"github.com/modkind/modkind/terraform"
)

// registerPool adds the flags of a pool's pod to fs.
func (o *Options) registerPool(fs *flag.FlagSet) {
	fs.StringVar(&o.Pool, "pool", "", "take the Runs of --namespace labelled with this runner pool, one at a time, instead of one --run")
	fs.StringVar(&o.PodInfoDir, "pod-info-dir", job.PoolPodInfoDir, "directory with this pod's name and uid (files of the downward API), with which it claims Runs (--pool); relative paths are from the working directory")
	fs.DurationVar(&o.Idle, "idle", 0, "stop once no Run was taken for this long (--pool; 0: never)")
	o.Deadlines = map[v1alpha1.RunOperation]time.Duration{}
	fs.Var(deadlines(o.Deadlines), "deadlines", "how long each operation's terraform work may take, as Operation=duration,... (--pool: --deadline per Run)")
}

// deadlines is --deadlines: Operation=duration pairs, comma-separated.
type deadlines map[v1alpha1.RunOperation]time.Duration

func (d deadlines) String() string {
	var parts []string
	for _, op := range slices.Sorted(maps.Keys(d)) {
		parts = append(parts, fmt.Sprintf("%s=%s", op, d[op]))
	}
	return strings.Join(parts, ",")
}

func (d deadlines) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		op, v, ok := strings.Cut(part, "=")
		if !ok {
			return fmt.Errorf("want Operation=duration, got %q", part)
		}
		dur, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		d[v1alpha1.RunOperation(op)] = dur
	}
	return nil
}

// serve is the loop of a pool's pod: it takes the Runs of its pool until SIGTERM or its idle time
// is over, each in a directory of its own, with one plugin cache for its life.
func serve(o *Options, out io.Writer) error {
	self, err := podOf(o.PodInfoDir)
	if err != nil {
		return err
	}
	base, err := o.executor(fmt.Sprintf("pool/%s/%s/", o.Namespace, self.Pod), out)
	if err != nil {
		return err
	}
	s, err := apis.Scheme()
	if err != nil {
		return err
	}
	cfg, err := apiConfig()
	if err != nil {
		return err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: s})
	if err != nil {
		return err
	}
	root := base.Dir
	// Kept for the pod's life, for its Runs only: terraform's version, the providers terraform
	// installed, the bundles fetched, the directories initialized.
	base.Versions = &terraform.Versions{}
	for _, d := range []string{"plugins", "bundles", "inits"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			return err
		}
	}
	p := &runnerpod.Pool{
		Client: c, Namespace: o.Namespace, Label: job.LabelPool, Key: o.Pool, Self: self, Idle: o.Idle, Out: out,
		Execute: func(ctx context.Context, run *v1alpha1.Run) error {
			x := *base
			x.PluginCache = filepath.Join(root, "plugins")
			x.Bundles, x.Inits = filepath.Join(root, "bundles"), filepath.Join(root, "inits")
			x.Deadline = o.Deadlines[run.Spec.Operation]
			return runnerpod.RunIn(ctx, x, filepath.Join(root, "runs", run.Name), run)
		},
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return p.Serve(ctx)
}

// podOf reads this pod's name and UID from the downward API's files in dir.
func podOf(dir string) (runs.Claimant, error) {
	read := func(name string) (string, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", fmt.Errorf("cannot read this pod's %s (--pod-info-dir): %w", name, err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	name, err := read("name")
	if err != nil {
		return runs.Claimant{}, err
	}
	uid, err := read("uid")
	if err != nil {
		return runs.Claimant{}, err
	}
	return runs.Claimant{Pod: name, UID: types.UID(uid)}, nil
}
