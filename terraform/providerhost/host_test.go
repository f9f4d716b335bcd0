package providerhost_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/modkind/modkind/terraform/providerhost"
	"github.com/modkind/modkind/test/thingstest"
)

// ground is a provider host of the things provider and what terraform needs to use it.
type ground struct {
	t         *testing.T
	tf        string
	cliConfig string
	cloud     *thingstest.Cloud
	host      *providerhost.Host
}

// protocols are the plugin protocols the host proxies: the things provider serves either.
var protocols = []int{5, 6}

// newGround starts a host of the things provider serving plugin protocol protocol.
func newGround(t *testing.T, protocol int) *ground {
	t.Helper()
	tf := os.Getenv("MODKIND_TERRAFORM")
	if tf == "" {
		tf = "terraform"
	}
	tf, err := exec.LookPath(tf)
	if err != nil {
		t.Fatal(err)
	}
	g := &ground{t: t, tf: tf, cliConfig: thingstest.Install(t), cloud: thingstest.NewCloud(t)}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "host")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	env := map[string]string{"PATH": os.Getenv("PATH"), "HOME": t.TempDir(), "THINGS_DIR": g.cloud.Dir,
		"THINGS_PROTOCOL": strconv.Itoa(protocol)}
	if g.host, err = providerhost.Start(context.Background(), exe, thingstest.Binary(t), dir, "", env); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.host.Stop(time.Minute) })
	if g.host.ProtocolVersion != protocol {
		t.Fatalf("the host says its provider speaks protocol %d, want %d", g.host.ProtocolVersion, protocol)
	}
	return g
}

// initialized is a terraform working directory of one bucket, initialized, to apply with the host.
type initialized struct {
	dir string
	env []string
}

// init initializes a directory of a bucket named name whose create takes secs. Every run of a
// test is initialized before any applies, so that a slow init cannot outlast another's create.
func (g *ground) init(name string, secs int) initialized {
	g.t.Helper()
	dir := g.t.TempDir()
	main := fmt.Sprintf(`{"terraform":{"required_providers":{"things":{"source":%q}}},
"resource":{"things_bucket":{"b":{"name":%q,"create_seconds":%d}}}}`, thingstest.Source, name, secs)
	if err := os.WriteFile(filepath.Join(dir, "main.tf.json"), []byte(main), 0o600); err != nil {
		g.t.Fatal(err)
	}
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+g.cliConfig, "TF_IN_AUTOMATION=1")
	init := exec.Command(g.tf, "init", "-no-color", "-input=false")
	init.Dir, init.Env = dir, env
	if out, err := init.CombinedOutput(); err != nil {
		g.t.Fatalf("init: %v\n%s", err, out)
	}
	return initialized{dir: dir, env: env}
}

// apply starts terraform apply in w, attached to the host.
func (g *ground) apply(w initialized) (*exec.Cmd, *bytes.Buffer) {
	g.t.Helper()
	reattach, _ := json.Marshal(map[string]any{thingstest.Source: map[string]any{"Protocol": "grpc",
		"ProtocolVersion": g.host.ProtocolVersion, "Pid": g.host.Pid, "Test": true,
		"Addr": map[string]string{"Network": "unix", "String": g.host.Socket}}})
	cmd := exec.Command(g.tf, "apply", "-auto-approve", "-no-color", "-input=false")
	cmd.Dir, cmd.Env = w.dir, append(w.env, "TF_REATTACH_PROVIDERS="+string(reattach))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		g.t.Fatal(err)
	}
	return cmd, &out
}

// creating waits until the bucket name is being created.
func (g *ground) creating(name string) {
	g.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if o := g.cloud.Object("things_bucket", name); o != nil && o["status"] == "creating" {
			return
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("bucket %s never started being created", name)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Interrupting one terraform attached to a shared provider never cancels another run's calls: the
// provider itself would cancel every call it serves on StopProvider. The interrupted run's own
// create then goes on to its end, and terraform records what it made.
func TestInterruptCancelsNoOtherRun(t *testing.T) {
	for _, p := range protocols {
		t.Run(fmt.Sprintf("Protocol%d", p), func(t *testing.T) { interruptCancelsNoOtherRun(t, p) })
	}
}

func interruptCancelsNoOtherRun(t *testing.T, protocol int) {
	g := newGround(t, protocol)
	wa, wb := g.init("a", 8), g.init("b", 8)
	a, aOut := g.apply(wa)
	b, bOut := g.apply(wb)
	g.creating("a")
	g.creating("b")
	if err := a.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait()
	if err := b.Wait(); err != nil {
		t.Errorf("the other apply must not be cancelled: %v\n%s", err, bOut)
	}
	if o := g.cloud.Object("things_bucket", "b"); o == nil || o["status"] != "ready" {
		t.Errorf("the other run's bucket must be created: %v", o)
	}
	if o := g.cloud.Object("things_bucket", "a"); o == nil || o["status"] != "ready" {
		t.Errorf("the interrupted run's create, left to finish, must be whole: %v\n%s", o, aOut)
	}
	select {
	case <-g.host.Exited():
		t.Error("the host ended with one run's interruption")
	default:
	}
}

// A run alone on its provider is interrupted as it would be with a provider of its own: its create
// is cancelled at once rather than waited for.
func TestInterruptAloneCancels(t *testing.T) {
	for _, p := range protocols {
		t.Run(fmt.Sprintf("Protocol%d", p), func(t *testing.T) { interruptAloneCancels(t, p) })
	}
}

func interruptAloneCancels(t *testing.T, protocol int) {
	g := newGround(t, protocol)
	cmd, out := g.apply(g.init("alone", 60))
	g.creating("alone")
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Errorf("the interrupted apply succeeded:\n%s", out)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the interrupted create was waited for (%s) instead of cancelled", took)
	}
	if o := g.cloud.Object("things_bucket", "alone"); o == nil || o["status"] == "ready" {
		t.Errorf("the cancelled create: %v", o)
	}
}

// A host whose controller is gone (standard input closed, as when the controller is killed)
// serves the terraform still attached to the end, then stops the provider and ends.
func TestHostOutlivesItsController(t *testing.T) {
	g := newGround(t, 6)
	cmd, out := g.apply(g.init("c", 4))
	g.creating("c")
	g.host.Release()
	if err := cmd.Wait(); err != nil {
		t.Errorf("the apply under way must finish after the controller is gone: %v\n%s", err, out)
	}
	if o := g.cloud.Object("things_bucket", "c"); o == nil || o["status"] != "ready" {
		t.Errorf("the bucket must be created whole: %v", o)
	}
	select {
	case <-g.host.Exited():
	case <-time.After(providerhost.Quiet + 30*time.Second):
		t.Fatal("the host did not end once no terraform was attached")
	}
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(g.host.Pid))); err == nil {
		t.Errorf("the provider (pid %d) outlived its host", g.host.Pid)
	}
}
