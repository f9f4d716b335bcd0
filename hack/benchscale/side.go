package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/artifact"
)

// modkindRun runs the modkind binary against the API server and measures it, as sd says.
func (b *bench) modkindRun(ctx context.Context, name string, sd side, m benchModule) (result, error) {
	r := result{job: sd.job}
	dirName := strings.Trim("modkind-"+sd.variant, "-")
	mod, err := b.moduleDir(dirName, name, m)
	if err != nil {
		return r, err
	}
	work := filepath.Join(b.scratch, dirName, name, "dir")
	logf, err := os.Create(filepath.Join(b.scratch, dirName, name, "modkind.log"))
	if err != nil {
		return r, err
	}
	defer logf.Close()
	args, mirror, err := b.modkindArgs(work, sd)
	if err != nil {
		return r, err
	}
	// A column reads from the controller's metrics the runs at once and, in job mode, the bytes
	// its runners fetched.
	metrics, err := freeAddress()
	if err != nil {
		return r, err
	}
	args = append(args, "--metrics-bind-address", metrics)
	cmd, err := b.startModkind(args, logf)
	if err != nil {
		return r, err
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			stopModkind(cmd)
		}
	}
	defer func() { stop() }()
	s := &sideRun{b: b, sd: sd, name: name, pid: cmd.Process.Pid, ns: dirName + "-" + strings.ReplaceAll(name, "_", "-"), metrics: metrics}
	inits := b.initCount()
	if err := s.prepare(ctx, mod, m); err != nil {
		return r, err
	}
	if sd.job && b.o.stuck > 0 {
		if s.stuck, err = startStuck(ctx, s, m); err != nil {
			return r, err
		}
		// The controller stops first, so that it makes nothing more in the tenant cleaned up.
		defer func() { stop(); s.stuck.cleanup(ctx) }()
	}
	if err := s.createAndUpdate(ctx, m, &r); err != nil {
		return r, err
	}
	if err := s.idle(ctx, &r); err != nil {
		return r, err
	}
	r.peakRSS = peakRSS(s.pid)
	r.ctrlInits = b.initCount() - inits
	if b.o.update {
		if r.updatePatches, err = s.patchesAlone(ctx); err != nil {
			return r, err
		}
	}
	if b.o.restart {
		next, f, err := s.restarted(ctx, cmd, args, logf, metrics)
		if next != nil {
			cmd = next
		}
		if r.restart = f; err != nil {
			return r, err
		}
		fmt.Fprintf(os.Stderr, "%s %s: restarted controller settled in %ss, %d terraform calls, %d API writes\n", sd.label, name,
			secs(f.settle), f.calls, f.requests.writes())
	}
	return r, s.report(ctx, work, mirror, &r)
}

// report checks, in a job column, that the runners' providers came from the controller's mirror
// (work is the controller's work directory, mirror its URL), and reports the warnings of the
// side's instances and the stuck tenant's state at the column's end, into r.
func (s *sideRun) report(ctx context.Context, work, mirror string, r *result) error {
	b, label := s.b, s.sd.label+" "+s.name
	if s.sd.job {
		var err error
		if r.check, err = b.ground.checkProviders(ctx, work, mirror); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s: %s\n", label, r.check)
	}
	b.reportWarnings(ctx, label, s.ns)
	if s.stuck != nil {
		var err error
		if r.stuck, err = s.stuck.state(ctx); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "stuck tenant %s, at the end: %s\n", s.stuck.ns, r.stuck)
		b.reportWarnings(ctx, "stuck tenant "+s.stuck.ns, s.stuck.ns)
	}
	return nil
}

// createAndUpdate measures the create of every instance of m and, unless -update=false, their
// update, into r.
func (s *sideRun) createAndUpdate(ctx context.Context, m benchModule, r *result) error {
	create, err := s.phase(ctx, 1, func(i int) error { return s.createInstance(ctx, m, i) })
	r.createWall, r.createCPU, r.createCalls, r.createProviders = create.wall, create.cpu, create.calls, create.providers
	r.createOwn, r.createRunnerCPU, r.createRunnerCalls, r.createAPI = create.own, create.runnerCPU, create.runnerCalls, create.api
	r.createRequests, r.createFetched, r.createAtOnce = create.requests, create.fetched, create.atOnce
	if err != nil {
		return err
	}
	if s.stuck != nil {
		s.stuck.createEnded(ctx)
	}
	if !s.b.o.update {
		return nil
	}
	profiled := s.b.profiler.start(ctx, s.sd.label+" "+s.name)
	update, err := s.phase(ctx, 2, func(i int) error { return s.updateInstance(ctx, i) })
	profiled()
	r.updateWall, r.updateCPU, r.updateCalls, r.updateProviders = update.wall, update.cpu, update.calls, update.providers
	r.updateOwn, r.updateRunnerCPU, r.updateRunnerCalls, r.updateAPI = update.own, update.runnerCPU, update.runnerCalls, update.api
	r.updateRequests, r.updateFetched, r.updateAtOnce = update.requests, update.fetched, update.atOnce
	return err
}

// modkindArgs are the arguments of side sd's modkind, with work as its work directory, and, in job
// mode, the URL of the provider mirror it serves its runners ("" in process mode).
func (b *bench) modkindArgs(work string, sd side) ([]string, string, error) {
	args := []string{"--kubeconfig", b.kubeconfig, "--work-dir", work,
		"--terraform-binary", b.terraform, "--max-concurrent-runs", strconv.Itoa(b.o.parallel),
		"--drift-interval", b.o.drift.String()}
	if b.o.stuck == 0 {
		// The measured namespace is the only tenant, as the floor's runs are: it may hold every
		// slot, where by default a namespace holds half so that another can always start.
		args = append(args, "--max-concurrent-runs-per-namespace", strconv.Itoa(b.o.parallel))
	}
	mirror := ""
	if sd.job {
		addr, err := freeAddress()
		if err != nil {
			return nil, "", err
		}
		args = append(args, "--runner", cmp.Or(sd.runner, "job"), "--runner-image", runnerImage,
			"--artifacts-bind-address", addr, "--artifacts-url", "https://"+addr)
		mirror = "https://" + addr + artifact.MirrorPrefix
	}
	args = append(args, strings.Fields(b.o.modkindArgs)...)
	return append(args, sd.args...), mirror, nil
}

// startModkind starts the modkind binary with args, its output going to logf.
func (b *bench) startModkind(args []string, logf *os.File) (*exec.Cmd, error) {
	cmd := exec.Command(b.modkind, args...)
	// The controller installs the things provider from the test's mirror; a runner's terraform
	// gets a CLI configuration of its own that only allows the controller's provider mirror.
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+b.cliConfig)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

// stopModkind asks modkind to stop (SIGTERM) and waits for it, killing it after 30 seconds.
func stopModkind(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// createModule creates side sd's Module of module name, whose source is the directory mod, and
// waits until it is Ready. It returns the kind of its instances.
func (b *bench) createModule(ctx context.Context, name string, sd side, mod string) (schema.GroupVersionKind, error) {
	group := strings.Trim(sd.variant+"."+strings.ReplaceAll(name, "_", ""), ".") + ".bench.example.org"
	gvk := schema.GroupVersionKind{Group: group, Version: "v1alpha1", Kind: "Item"}
	mdl := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: strings.Trim("bench-"+sd.variant+"-"+strings.ReplaceAll(name, "_", "-"), "-")},
		Spec:       v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: mod}, CRD: v1alpha1.CRDNames{Group: group, Kind: gvk.Kind}},
	}
	if err := b.c.Create(ctx, mdl); err != nil {
		return gvk, err
	}
	return gvk, waitFor(ctx, 5*time.Minute, "Module Ready", func() (bool, error) {
		if err := b.c.Get(ctx, types.NamespacedName{Name: mdl.Name}, mdl); err != nil {
			return false, err
		}
		return mdl.Status.GetCondition("Ready").Status == corev1.ConditionTrue, nil
	})
}

// A sideRun is one side's modkind at work on one module: its process, and the kind and namespace
// of the module's instances.
type sideRun struct {
	b    *bench
	sd   side
	name string
	pid  int
	gvk  schema.GroupVersionKind
	ns   string
	// metrics is the address of the controller's metrics, "" when not served.
	metrics string
	// stuck is the stuck tenant beside the measured namespace: nil without one.
	stuck *stuckTenant
}

// phaseFigures are a side's figures for one phase, create or update.
type phaseFigures struct {
	wall, cpu, own, runnerCPU, api time.Duration
	calls, runnerCalls, providers  int
	requests                       requestCounts
	// fetched is what the runners fetched from the controller's artifact server; atOnce the most
	// runs seen going at once (sampleAtOnce).
	fetched fetchedBytes
	atOnce  int
}

// makeNamespace makes the instances' namespace: in job mode a tenant's, where runner pods can run.
func (s *sideRun) makeNamespace(ctx context.Context) error {
	if s.sd.job {
		return s.b.ground.tenant(ctx, s.ns)
	}
	return createNamespace(ctx, s.b.c, s.ns)
}

// runners is the CPU of the runner pods so far and their terraform calls: nothing in process
// mode, where no pod runs.
func (s *sideRun) runners() (time.Duration, int) {
	if !s.sd.job {
		return 0, 0
	}
	return s.b.ground.runnerCPU(), s.b.ground.callCount()
}

// phase applies apply to every instance, 20 at once, and measures the side from then until all of
// them are Ready and Synced at generation gen and, in job mode, the runner pods' processes ended.
func (s *sideRun) phase(ctx context.Context, gen int64, apply func(i int) error) (phaseFigures, error) {
	b := s.b
	before, ownBefore, calls, apiBefore, providers := cpuOf(s.pid), ownCPUOf(s.pid), b.callCount(), apiServerCPU(), b.providerCount()
	mark := b.requests.mark()
	served := s.served(ctx)
	atOnce := s.sampleAtOnce(ctx)
	rcpu, rcalls := s.runners()
	start := time.Now()
	if _, err := parallel(ctx, b.o.n, 20, func(i int) (time.Duration, error) { return 0, apply(i) }); err != nil {
		return phaseFigures{}, err
	}
	end, err := b.waitAllReady(ctx, time.Duration(b.o.n)*30*time.Second, s.gvk, s.ns, gen)
	most := atOnce()
	f := phaseFigures{wall: end.Sub(start), api: apiServerCPU() - apiBefore}
	runTimes(ctx, b.c, fmt.Sprintf("%s %s, generation %d", s.sd.label, s.name, gen), s.ns, start)
	if s.sd.job && s.sd.runner != "pool" && err == nil {
		// A runner reports its Run before its process ends: its CPU is the test node's once
		// the node reaped it. A pool's pods stay for the next phase: their CPU counts once they
		// stopped (--pool-idle), in a later phase's figures.
		err = waitFor(ctx, 2*time.Minute, "the runner pods' processes to end", func() (bool, error) {
			return !hasChildren(b.ground.node.Process.Pid), nil
		})
	}
	f.own = ownCPUOf(s.pid) - ownBefore
	rcpuAfter, rcallsAfter := s.runners()
	f.runnerCPU, f.runnerCalls = rcpuAfter-rcpu, rcallsAfter-rcalls
	f.cpu, f.calls, f.providers = cpuOf(s.pid)-before, b.callCount()-calls, b.providerCount()-providers
	f.requests = b.requests.countOrWarn(mark)
	f.fetched = s.served(ctx).since(served)
	f.atOnce = most
	return f, err
}

// served is what the controller's artifact server served so far; a failure is printed, not
// returned: the other figures of a run are worth more.
func (s *sideRun) served(ctx context.Context) fetchedBytes {
	f, err := servedBytes(ctx, s.metrics)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot read the bytes served:", err)
		return fetchedBytes{}
	}
	return f
}

// createInstance creates instance i with module m's variables for input v1.
func (s *sideRun) createInstance(ctx context.Context, m benchModule, i int) error {
	u := newInstance(s.gvk, s.ns, fmt.Sprintf("i%d", i), m.vars(s.b, i, "v1"))
	if m.fromProviderConfig {
		if err := unstructured.SetNestedMap(u.Object, map[string]any{"kind": "ProviderConfig", "name": providerConfigName}, "spec", "providerConfigRef"); err != nil {
			return err
		}
	}
	return s.b.c.Create(ctx, u)
}

// makeProviderConfig makes the ProviderConfig of the instances' namespace: the cloud in its
// environment, as a tenant gives credentials, and a literal provider block.
func (s *sideRun) makeProviderConfig(ctx context.Context) error {
	cloud := s.b.cloud
	return s.b.c.Create(ctx, &v1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: providerConfigName},
		Spec: v1alpha1.ProviderConfigSpec{
			Env:       []v1alpha1.EnvVar{{Name: "THINGS_DIR", Value: &cloud}},
			Providers: &runtime.RawExtension{Raw: []byte(`{"things":{}}`)},
		},
	})
}

// updateInstance changes instance i's input to v2.
func (s *sideRun) updateInstance(ctx context.Context, i int) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(s.gvk)
	u.SetNamespace(s.ns)
	u.SetName(fmt.Sprintf("i%d", i))
	return s.b.c.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(updatePatch)))
}

// idle leaves modkind alone for the idle window and records into r what it and the runners did
// meanwhile.
func (s *sideRun) idle(ctx context.Context, r *result) error {
	before, calls := cpuOf(s.pid), s.b.callCount()
	rcpu, rcalls := s.runners()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(s.b.o.idle):
	}
	r.idleCPU, r.idleCalls = cpuOf(s.pid)-before, s.b.callCount()-calls
	rcpuAfter, rcallsAfter := s.runners()
	r.idleRunnerCPU, r.idleRunnerCalls = rcpuAfter-rcpu, rcallsAfter-rcalls
	return nil
}

// reportWarnings prints the reasons of the Warning events in ns, with a message of each: what
// made runs fail and be retried.
func (b *bench) reportWarnings(ctx context.Context, what, ns string) {
	evs := &corev1.EventList{}
	if err := b.c.List(ctx, evs, client.InNamespace(ns)); err != nil {
		fmt.Fprintf(os.Stderr, "%s: cannot list events: %v\n", what, err)
		return
	}
	counts, sample := map[string]int32{}, map[string]string{}
	for _, e := range evs.Items {
		if e.Type == corev1.EventTypeWarning {
			counts[e.Reason] += max(e.Count, 1)
			sample[e.Reason] = e.Message
		}
	}
	for reason, n := range counts {
		fmt.Fprintf(os.Stderr, "%s: %d warning events %s, e.g. %.300s\n", what, n, reason, sample[reason])
	}
}

// waitAllReady watches the instances of gvk in ns until all n of them are Ready and Synced at
// generation gen or later, and returns when the last one became so: a watch, not a poll, so that
// modkind's time is not rounded up to a poll interval the floor's is not.
func (b *bench) waitAllReady(ctx context.Context, timeout time.Duration, gvk schema.GroupVersionKind, ns string, gen int64) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := b.c.List(ctx, l, client.InNamespace(ns)); err != nil {
			return time.Time{}, fmt.Errorf("waiting for all Ready: %w", err)
		}
		ready := map[string]bool{}
		for i := range l.Items {
			ready[l.Items[i].GetName()] = instanceReady(&l.Items[i], gen)
		}
		if allTrue(ready, b.o.n) {
			return time.Now(), nil
		}
		w, err := b.c.Watch(ctx, l, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: l.GetResourceVersion()}})
		if err != nil {
			return time.Time{}, fmt.Errorf("waiting for all Ready: %w", err)
		}
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue // An error event (the watch expired): list again.
			}
			if ev.Type == watch.Deleted {
				delete(ready, u.GetName())
			} else {
				ready[u.GetName()] = instanceReady(u, gen)
			}
			if allTrue(ready, b.o.n) {
				w.Stop()
				return time.Now(), nil
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return time.Time{}, fmt.Errorf("gave up waiting for all Ready after %s", timeout)
		}
	}
}

// instanceReady reports whether u is Ready and Synced at generation gen or later.
func instanceReady(u *unstructured.Unstructured, gen int64) bool {
	og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if u.GetGeneration() < gen || og < u.GetGeneration() {
		return false
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	ok := 0
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if (m["type"] == "Ready" || m["type"] == "Synced") && m["status"] == "True" {
			ok++
		}
	}
	return ok == 2
}

// allTrue reports whether m holds at least n entries, all true.
func allTrue(m map[string]bool, n int) bool {
	if len(m) < n {
		return false
	}
	for _, v := range m {
		if !v {
			return false
		}
	}
	return true
}

// prepare makes what the side's instances need: their Module (of the module in mod), their
// namespace and, where the module takes its provider's configuration from one, a ProviderConfig.
func (s *sideRun) prepare(ctx context.Context, mod string, m benchModule) error {
	var err error
	if s.gvk, err = s.b.createModule(ctx, s.name, s.sd, mod); err != nil {
		return err
	}
	if err := s.makeNamespace(ctx); err != nil {
		return err
	}
	if m.fromProviderConfig {
		return s.makeProviderConfig(ctx)
	}
	return nil
}
