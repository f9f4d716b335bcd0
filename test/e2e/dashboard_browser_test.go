package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// updateScreenshots writes the browser test's screenshots to docs/ as well, for the README.
var updateScreenshots = flag.Bool("update-screenshots", false, "write the dashboard's screenshots to docs/")

// startDashboard runs `modkind dashboard` as a process of its own and returns the URL it printed.
func startDashboard(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envRunMain+"="+strings.Join(append([]string{"dashboard"}, args...), "\x1f"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("modkind dashboard printed no URL: %v", err)
	}
	m := regexp.MustCompile(`open (http://127\.0\.0\.1:\d+/\?token=\S+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("modkind dashboard printed %q, want its URL", line)
	}
	return m[1]
}

// browser starts a headless Chromium (MODKIND_CHROMIUM) and returns its context, and the page's
// errors so far: uncaught exceptions, console errors and CSP violations.
func browser(t *testing.T) (context.Context, func() []string) {
	t.Helper()
	path := os.Getenv("MODKIND_CHROMIUM")
	if path == "" {
		t.Fatal("MODKIND_CHROMIUM is not set: run make test, or set it to hack/chromium.sh's output")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless,
		chromedp.WindowSize(1280, 900), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	var mu sync.Mutex
	var problems []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				problems = append(problems, fmt.Sprintf("console error: %d arguments", len(ev.Args)))
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || strings.Contains(ev.Entry.Text, "Content Security Policy") {
				problems = append(problems, "log: "+ev.Entry.Text)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	for _, enable := range []cdp.Command[cdp.Empty, cdp.Empty]{log.Enable, runtime.Enable} {
		if _, err := chromedp.Call(ctx, enable, cdp.Empty{}); err != nil {
			t.Fatal(err)
		}
	}
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), problems...)
	}
}

// screenshot saves the page as name in the test's artifacts (MODKIND_ARTIFACTS or a temporary
// directory, logged), and in docs/ with -update-screenshots.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("MODKIND_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "modkind-artifacts")
	}
	dirs := []string{dir}
	if *updateScreenshots {
		dirs = append(dirs, filepath.Join("..", "..", "docs"))
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot %s", filepath.Join(d, name))
	}
}

// fleetText waits until the Fleet page's body, as the browser shows it, contains want: the
// browser evaluates the check on each frame it draws, so no test-side polling.
func fleetText(t *testing.T, ctx context.Context, want string) {
	t.Helper()
	quoted, _ := json.Marshal(want)
	check := fmt.Sprintf(`document.getElementById("fleet").textContent.includes(%s)`, quoted)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](check, chromedp.WithPollingTimeout(3*time.Minute))); err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#fleet")))
		t.Fatalf("the Fleet page never showed %q (%v); it shows:\n%s", want, err, text)
	}
}

// The dashboard in a real browser: the fleet as the controller reports it, a change pushed to the
// open page without a reload, a plan approved by a click and then applied, and no script error or
// CSP violation throughout.
func TestDashboardBrowser(t *testing.T) {
	kubeconfig, c, _ := modkindOnAPIServer(t)
	modDir, err := filepath.Abs(filepath.Join("..", "..", "reconcile", "integration", "testdata", "modules", "trace"))
	if err != nil {
		t.Fatal(err)
	}
	m := &v1alpha1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: "traces"},
		Spec:       v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{Path: modDir}, CRD: v1alpha1.CRDNames{Group: "dash.example.org", Kind: "Trace"}},
	}
	poll(t, "the Module CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return c.Create(ctx, m) == nil, nil
	})
	gvk := schema.GroupVersionKind{Group: "dash.example.org", Version: "v1alpha1", Kind: "Trace"}
	traces := t.TempDir()
	instance := func(name string, manual bool) *unstructured.Unstructured {
		spec := map[string]any{"forProvider": map[string]any{"dir": traces, "files": []any{name}}}
		if manual {
			spec["approval"] = map[string]any{"mode": "Manual"}
		}
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace("default")
		u.SetName(name)
		return u
	}
	ready, waiting := instance("ready", false), instance("waiting", true)
	createAll(t, c, []*unstructured.Unstructured{ready})
	waitInstanceReady(t, c, ready)

	ctx, problems := browser(t)
	url := startDashboard(t, "--kubeconfig", kubeconfig)
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#module-traces"))); err != nil {
		t.Fatal(err)
	}
	location, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(location, "token=") {
		t.Errorf("the token stays in the address bar: %s", location)
	}
	fleetText(t, ctx, "ready: 1")

	// A change in the cluster reaches the open page without a reload: a mark set on the page's
	// window survives it.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded = true`)); err != nil {
		t.Fatal(err)
	}
	createAll(t, c, []*unstructured.Unstructured{waiting})
	fleetText(t, ctx, "waits for approval of plan")
	if marked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded === true`)); err != nil || !marked {
		t.Errorf("the page was reloaded to show the change (err %v)", err)
	}
	screenshot(t, ctx, "dashboard-fleet.png")

	// The Approval inbox shows the waiting plan with terraform's text of it.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a[href="/approvals"]`)), chromedp.WaitVisible(chromedp.CSS("#approvals"))); err != nil {
		t.Fatal(err)
	}
	pageText(t, ctx, "approvals", "default/waiting")
	pageText(t, ctx, "approvals", "will be created")
	screenshot(t, ctx, "dashboard-approvals.png")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a[href="/"]`)), chromedp.WaitVisible(chromedp.CSS("#fleet"))); err != nil {
		t.Fatal(err)
	}

	// Approve by clicking; modkind plan then no longer shows a plan waiting, and the instance is applied.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`form[action="/approve"] button`)), chromedp.WaitVisible(chromedp.CSS("#fleet"))); err != nil {
		t.Fatal(err)
	}
	waitInstanceReady(t, c, waiting)
	poll(t, "modkind plan to show the plan applied", 2*time.Minute, func(context.Context) (bool, error) {
		code, out, _ := runCLI("plan", "Trace.dash.example.org/waiting", "-n", "default", "--kubeconfig", kubeconfig)
		return code == 0 && !strings.Contains(out, "It waits for approval"), nil
	})
	fleetText(t, ctx, "ready: 2")

	// The Instance page: its conditions, spec, outputs and Runs, each with its log (process mode:
	// the controller wrote it on the Run).
	base := url[:strings.Index(url, "/?token=")]
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/instances/Trace.dash.example.org/default/waiting"), chromedp.WaitVisible(chromedp.CSS("#instance"))); err != nil {
		t.Fatal(err)
	}
	pageText(t, ctx, "instance", "Ready")
	pageText(t, ctx, "instance", "Apply")
	pageText(t, ctx, "instance", "Apply complete! Resources: ")
	screenshot(t, ctx, "dashboard-instance.png")

	if p := problems(); len(p) > 0 {
		t.Errorf("the page had script errors or CSP violations:\n%s", strings.Join(p, "\n"))
	}
}
