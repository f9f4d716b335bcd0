package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/executor/job"
)

// runnerImage is the image of runner Jobs; the test node runs the measured modkind binary for it.
const runnerImage = "modkind:bench"

// envControllerManager names the kube-controller-manager binary (hack/controller-manager.sh).
const envControllerManager = "MODKIND_CONTROLLER_MANAGER"

// A ground is what makes Jobs run on the API server: kube-controller-manager (Job controller,
// garbage collector, service account token publishing) and test/testnode, a node whose pods are
// its own child processes. The node's terraform is a wrapper that counts each call and records
// what each init was allowed to install from, and what it installed.
type ground struct {
	c    client.Client
	kcm  *exec.Cmd
	node *exec.Cmd
	// root is the directory of the pods' files.
	root string
	// calls logs the runners' terraform calls, one first argument a line.
	calls string
	// inits holds one record per runner terraform init; done holds those already checked.
	inits, done string
}

// startGround starts the ground's processes and waits for the test node. With quota, the
// controller manager also counts what ResourceQuotas cover: admission holds pods to a quota only
// once its status says what is used.
func startGround(ctx context.Context, env *envtest.Environment, c client.Client, scratch, modkind, tf, testnode string, quota bool) (*ground, error) {
	kcm := os.Getenv(envControllerManager)
	if kcm == "" {
		return nil, fmt.Errorf("%s must name kube-controller-manager (hack/controller-manager.sh)", envControllerManager)
	}
	g := &ground{c: c, root: filepath.Join(scratch, "pods"), calls: filepath.Join(scratch, "runner-calls.log"),
		inits: filepath.Join(scratch, "runner-inits"), done: filepath.Join(scratch, "runner-inits", "done")}
	bin := filepath.Join(scratch, "runnerbin")
	for _, d := range []string{bin, g.done, g.root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if testnode == "" {
		testnode = filepath.Join(scratch, "testnode")
		if out, err := exec.CommandContext(ctx, "go", "-C", "test/testnode", "build", "-o", testnode, "./cmd/testnode").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building the test node (run from the repository's root, or give -testnode): %w\n%s", err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "terraform"), []byte(runnerWrapper(g.calls, g.inits, tf)), 0o755); err != nil {
		return nil, err
	}
	ca := filepath.Join(scratch, "ca.crt")
	if err := os.WriteFile(ca, env.Config.CAData, 0o600); err != nil {
		return nil, err
	}
	kcmConfig, err := adminKubeconfig(env, scratch, "system:kube-controller-manager")
	if err != nil {
		return nil, err
	}
	nodeConfig, err := adminKubeconfig(env, scratch, "system:node:testnode")
	if err != nil {
		return nil, err
	}
	controllers := "job-controller,garbage-collector-controller,ttl-after-finished-controller,serviceaccount-controller,root-ca-certificate-publisher-controller"
	if quota {
		controllers += ",resourcequota-controller"
	}
	if g.kcm, err = startLogged(filepath.Join(scratch, "kube-controller-manager.log"), nil, kcm,
		"--kubeconfig", kcmConfig, "--controllers", controllers,
		"--root-ca-file", ca, "--leader-elect=false", "--secure-port=0"); err != nil {
		return nil, err
	}
	// The pods get the node's PATH: the counting terraform comes first.
	if g.node, err = startLogged(filepath.Join(scratch, "testnode.log"),
		append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH")), testnode,
		"--kubeconfig", nodeConfig, "--root", g.root, "--image", runnerImage+"="+modkind); err != nil {
		g.stop()
		return nil, err
	}
	if err := waitFor(ctx, 2*time.Minute, "the test node to be Ready", func() (bool, error) {
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: "testnode"}, n); err != nil {
			return false, nil //nolint:nilerr // Not registered yet.
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		g.stop()
		return nil, err
	}
	return g, nil
}

// runnerWrapper is the terraform of runner pods: it logs each call's first argument to calls and
// becomes terraform, except for init, after which it writes a record into dir: the CLI
// configuration terraform ran with (tokens redacted) and a sha256 of each file init put into
// .terraform/providers.
func runnerWrapper(calls, dir, tf string) string {
	return fmt.Sprintf(`#!/bin/sh
echo "$1" >> %[1]q
if [ "$1" != init ]; then exec %[3]q "$@"; fi
%[3]q "$@"
rc=$?
rec=$(mktemp %[2]q/init.XXXXXX)
{
  echo "rc $rc"
  echo "dir $PWD"
  echo "args $*"
  echo "config-begin"
  sed 's/^\([[:space:]]*token[[:space:]]*=[[:space:]]*\).*$/\1"[redacted]"/' "$TF_CLI_CONFIG_FILE"
  echo
  echo "config-end"
  if [ -d .terraform/providers ]; then find -L .terraform/providers -type f -exec sha256sum {} + | sed 's/^/installed /'; fi
} > "$rec.tmp"
mv "$rec.tmp" "$rec"
exit $rc
`, calls, dir, tf)
}

func (g *ground) stop() {
	for _, cmd := range []*exec.Cmd{g.node, g.kcm} {
		if cmd == nil || cmd.Process == nil {
			continue
		}
		// SIGTERM first: the test node stops its pods' processes.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
}

// runnerCPU is the CPU time of the pods' processes, those the test node reaped and those that
// still run (a runner pool's pods, a Job's runner at the phase's edge): the runners, with the
// terraform and providers they started. The node's own work is left out.
func (g *ground) runnerCPU() time.Duration { return treeTicks(g.node.Process.Pid) }

// callCount is how many terraform processes the runners started so far.
func (g *ground) callCount() int { return countLines(g.calls, "") }

// tenant makes namespace ns with the runner service account, bound to the runner ClusterRole.
func (g *ground) tenant(ctx context.Context, ns string) error {
	for _, o := range job.RunnerAccess("modkind-runner", ns) {
		if err := g.c.Create(ctx, o); err != nil && !kerrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// stuckNamespace makes namespace ns where no runner can ever run, for cause: causeSA, no runner
// service account (the controller makes no Run there); causeQuota, the runner service account of
// tenant but a ResourceQuota of no pods, so that runner Jobs are made and hold their Runs' slots
// until the start timeout fails them. It returns once the quota is counted: before that,
// admission lets pods through.
func (g *ground) stuckNamespace(ctx context.Context, ns, cause string) error {
	if cause == causeSA {
		return createNamespace(ctx, g.c, ns)
	}
	if err := g.tenant(ctx, ns); err != nil {
		return err
	}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-pods"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}}}
	if err := g.c.Create(ctx, q); err != nil && !kerrors.IsAlreadyExists(err) {
		return fmt.Errorf("quota of namespace %s: %w", ns, err)
	}
	return waitFor(ctx, 2*time.Minute, "the quota of namespace "+ns+" to be counted (resourcequota-controller)", func() (bool, error) {
		if err := g.c.Get(ctx, client.ObjectKeyFromObject(q), q); err != nil {
			return false, err
		}
		_, counted := q.Status.Used[corev1.ResourcePods]
		return counted, nil
	})
}

// providerCheck is what the runner inits of one column were allowed to install from and what they
// installed.
type providerCheck struct {
	// inits is how many runner terraform inits there were, failed counts how many of them failed.
	inits, failed int
	// installed is how many files they put into .terraform/providers, in all.
	installed int
	// bundled is how many provider files the controller installed for its bundles.
	bundled int
	// outside is how many inits either ran with a CLI configuration that allowed anything but the
	// controller's provider mirror (a registry, another mirror, a filesystem mirror) or installed
	// a file that is not byte for byte one the controller installed for its bundles.
	outside int
	// why says, for the first of those, what was wrong.
	why string
}

func (p providerCheck) String() string {
	s := fmt.Sprintf("%d runner inits (%d failed), %d provider files installed by them, %d provider files in the controller's bundles; %d inits could or did get a provider from elsewhere",
		p.inits, p.failed, p.installed, p.bundled, p.outside)
	if p.why != "" {
		s += ", e.g. " + p.why
	}
	return s
}

// checkProviders reads the records of the runner inits since the last check, against the
// controller's provider mirror URL and the provider files in the controller's work directory work
// (its bundles' .terraform/providers, what the mirror serves).
func (g *ground) checkProviders(ctx context.Context, work, mirror string) (providerCheck, error) {
	bundled, err := sha256s(ctx, work, "*/.terraform/providers/*")
	if err != nil {
		return providerCheck{}, err
	}
	// The controller removes the directory it installed a bundle's providers in once it has put
	// them into its artifact store: the files it serves are those in the store's archives.
	served, err := zippedSums(work)
	if err != nil {
		return providerCheck{}, err
	}
	for sum := range served {
		bundled[sum] = true
	}
	return g.check(mirror, bundled)
}

// zippedSums returns the sha256 sums of the files in the provider archives (sha256-<sum>.zip)
// below dir, the controller's artifact store.
func zippedSums(dir string) (map[string]bool, error) {
	sums := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "sha256-") || !strings.HasSuffix(d.Name(), ".zip") {
			return err
		}
		z, err := zip.OpenReader(path)
		if err != nil {
			return err
		}
		defer z.Close()
		for _, f := range z.File {
			if !f.Mode().IsRegular() {
				continue
			}
			r, err := f.Open()
			if err != nil {
				return err
			}
			h := sha256.New()
			_, err = io.Copy(h, r)
			r.Close()
			if err != nil {
				return err
			}
			sums[hex.EncodeToString(h.Sum(nil))] = true
		}
		return nil
	})
	return sums, err
}

// check reads the records of the runner inits since the last check, against the controller's
// provider mirror URL and the sha256 sums of the controller's installed provider files, and moves
// them to done.
func (g *ground) check(mirror string, bundled map[string]bool) (providerCheck, error) {
	p := providerCheck{bundled: len(bundled)}
	entries, err := os.ReadDir(g.inits)
	if err != nil {
		return p, err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasPrefix(e.Name(), "init.") || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		path := filepath.Join(g.inits, e.Name())
		raw, err := os.ReadFile(path)
		if err != nil {
			return p, err
		}
		p.inits++
		rec := parseInit(raw)
		if rec.rc != "0" {
			p.failed++
		}
		p.installed += len(rec.installed)
		why := rec.judge(mirror, bundled)
		if why != "" {
			p.outside++
			if p.why == "" {
				p.why = why
			}
		}
		if err := os.Rename(path, filepath.Join(g.done, e.Name())); err != nil {
			return p, err
		}
	}
	return p, nil
}

// judge says what let the init of r get a provider from outside the controller, or "" when
// nothing did: its CLI configuration must allow nothing but the controller's provider mirror (with
// credentials for its host, the token redacted), and each file it installed must be, byte for
// byte, one the controller installed for its bundles.
func (r initRecord) judge(mirror string, bundled map[string]bool) string {
	u, err := url.Parse(mirror)
	if err != nil || mirror == "" {
		return fmt.Sprintf("no controller mirror to judge the init in %s by", r.dir)
	}
	installation := `provider_installation{network_mirror{url="` + mirror + `"}}`
	credentials := `credentials"` + u.Host + `"{token="[redacted]"}`
	switch strings.Join(strings.Fields(r.config), "") {
	case installation, installation + credentials:
	default:
		return fmt.Sprintf("init in %s ran with CLI configuration %q", r.dir, r.config)
	}
	for _, h := range r.installed {
		if !bundled[h] {
			return fmt.Sprintf("init in %s installed a file (sha256 %s) that the controller did not install", r.dir, h)
		}
	}
	return ""
}

type initRecord struct {
	rc, dir, config string
	installed       []string
}

func parseInit(raw []byte) initRecord {
	r := initRecord{}
	var config []string
	inConfig := false
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		l := sc.Text()
		if inConfig {
			if l == "config-end" {
				inConfig = false
				continue
			}
			config = append(config, l)
			continue
		}
		k, v, _ := strings.Cut(l, " ")
		switch k {
		case "config-begin":
			inConfig = true
		case "rc":
			r.rc = v
		case "dir":
			r.dir = v
		case "installed":
			r.installed = append(r.installed, strings.Fields(v)[0])
		}
	}
	r.config = strings.Join(config, "\n")
	return r
}

// sha256s is the set of sha256 sums of the files under dir, links followed, whose path matches
// the find pattern path.
func sha256s(ctx context.Context, dir, path string) (map[string]bool, error) {
	out, err := exec.CommandContext(ctx, "find", "-L", dir, "-path", path, "-type", "f", "-exec", "sha256sum", "{}", "+").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("find in %s: %w\n%s", dir, err, ee.Stderr)
		}
		return nil, err
	}
	sums := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			sums[f[0]] = true
		}
	}
	return sums, nil
}

// hasChildren says whether process pid has child processes.
func hasChildren(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return false
	}
	for _, t := range tasks {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err == nil && len(bytes.TrimSpace(raw)) > 0 {
			return true
		}
	}
	return false
}

// freeAddress is a loopback address with a port nothing listens on now.
func freeAddress() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// adminKubeconfig writes a kubeconfig of user name, a cluster admin, into dir.
func adminKubeconfig(env *envtest.Environment, dir, name string) (string, error) {
	u, err := env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, strings.ReplaceAll(name, ":", "-")+".kubeconfig")
	return p, os.WriteFile(p, kc, 0o600)
}

// startLogged starts bin with args, env (the process's own when nil) and its output in log.
func startLogged(log string, env []string, bin string, args ...string) (*exec.Cmd, error) {
	f, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	// The child holds the file now.
	f.Close()
	return cmd, nil
}

// runTimes prints, to stderr, when the Runs of ns created since start were created, how long each
// waited for its pod to start and how long it ran: where a job-mode phase spent its time.
func runTimes(ctx context.Context, c client.Client, what, ns string, start time.Time) {
	runs := &v1alpha1.RunList{}
	if err := c.List(ctx, runs, client.InNamespace(ns)); err != nil {
		fmt.Fprintf(os.Stderr, "%s: cannot list Runs: %v\n", what, err)
		return
	}
	var created, queued, ran []time.Duration
	phases := map[string]int{}
	for _, r := range runs.Items {
		// Creation timestamps have a resolution of a second; the recorder's annotation, when
		// there is one, of a nanosecond.
		made := r.CreationTimestamp.Time
		if t, err := time.Parse(time.RFC3339Nano, r.Annotations["modkind.io/created"]); err == nil {
			made = t
		}
		if made.Before(start.Truncate(time.Second)) {
			continue
		}
		phases[string(r.Status.Phase)]++
		created = append(created, made.Sub(start))
		if r.Status.StartTime != nil {
			queued = append(queued, r.Status.StartTime.Sub(made))
			if r.Status.CompletionTime != nil {
				ran = append(ran, r.Status.CompletionTime.Sub(r.Status.StartTime.Time))
			}
		}
	}
	fmt.Fprintf(os.Stderr, "%s: %d Runs %v; created after the change %s; created → started %s; started → completed %s\n",
		what, len(created), phases, spread(created), spread(queued), spread(ran))
}

// spread is the minimum, median and maximum of ds.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	slices.Sort(ds)
	r := func(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }
	return fmt.Sprintf("min %s, median %s, max %s", r(ds[0]), r(ds[len(ds)/2]), r(ds[len(ds)-1]))
}
