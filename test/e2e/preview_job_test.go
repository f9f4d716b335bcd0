package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/apis/v1alpha1"
	jobexec "github.com/modkind/modkind/executor/job"
	"github.com/modkind/modkind/kind"
)

// previewJobModule is the module the job-mode preview moves from v1 to v2: per instance, its
// tier says whether v2 changes nothing, updates its object in place, or replaces it.
const previewJobModule = `variable "name" { type = string }
variable "tier" { type = string }
resource "terraform_data" "main" {
  input            = VERSION == "v2" && var.tier == "update" ? "${var.name} v2" : var.name
  triggers_replace = VERSION == "v2" && var.tier == "replace" ? "v2" : "v1"
}
output "message" { value = terraform_data.main.output }
`

// previewRepo makes a git repository with the tags v1 and v2 of previewJobModule.
func previewRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	run("init", "-q", "-b", "main")
	for _, v := range []string{"v1", "v2"} {
		src := strings.ReplaceAll(previewJobModule, "VERSION", `"`+v+`"`)
		if err := os.WriteFile(filepath.Join(repo, "main.tf"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		run("add", ".")
		run("commit", "-q", "-m", v)
		run("tag", v)
	}
	return repo
}

// In job mode the preview of a Manual rollout runs as Plan Runs executed by Jobs under the
// tenants' runner accounts: every instance's counts arrive in its status and in the Module's, per
// namespace, no state Secret changes and nothing moves. A Plan Run's result rewritten with the
// runner's account (as a tenant may) is taken for nothing: once promoted, every instance plans
// for real, terraform's plans have the preview's counts, and the guard refuses where it said.
func TestJobFleetPreview(t *testing.T) {
	const name = "preview-job"
	f := startPreviewFleet(t, "previewjob.example.org", name)
	g, c, gvk := f.g, f.g.c, f.gvk
	ctx := context.Background()
	insts := f.create(t, []tiered{{"team-a", "update-a", "update", ""}, {"team-a", "replace-a", "replace", ""}, {"team-b", "same-b", "same", ""}})
	read := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		got := u.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	stateVersion := func(u *unstructured.Unstructured) string {
		ref := kind.StateRef(gvk.GroupKind().String(), u.GetNamespace(), u.GetName())
		sec := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, sec); err != nil {
			t.Fatal(err)
		}
		return sec.ResourceVersion
	}
	states, revs := map[string]string{}, map[string]string{}
	for _, u := range insts {
		waitInstanceReady(t, c, u)
		states[u.GetName()] = stateVersion(u)
		revs[u.GetName()], _, _ = unstructured.NestedString(read(u).Object, "status", "moduleRevision")
	}

	m := f.moveToV2(t)
	want := v1alpha1.PreviewCounts{Instances: 3, NoChanges: 1, Update: 1, Replace: 1, ReplaceRefused: 1}
	wantNS := []v1alpha1.NamespacePreview{
		{Namespace: "team-a", PreviewCounts: v1alpha1.PreviewCounts{Instances: 2, Update: 1, Replace: 1, ReplaceRefused: 1}},
		{Namespace: "team-b", PreviewCounts: v1alpha1.PreviewCounts{Instances: 1, NoChanges: 1}},
	}
	var last any
	err := pollErr(5*time.Minute, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, m); err != nil || m.Status.Rollout == nil || m.Status.Rollout.Preview == nil {
			last = m.Status.Rollout
			return false, nil
		}
		p := m.Status.Rollout.Preview
		last = p
		return p.Revision == m.Status.Rollout.To && cmp.Diff(want, p.PreviewCounts) == "" && cmp.Diff(wantNS, p.Namespaces) == "", nil
	})
	if err != nil {
		g.logRuns(t)
		t.Fatalf("the Module's preview: want %+v per namespace %+v, last seen %+v", want, wantNS, last)
	}
	to := m.Status.Rollout.To
	wantCounts := map[string][4]int64{"update-a": {0, 1, 0, 0}, "replace-a": {1, 0, 1, 1}, "same-b": {0, 0, 0, 0}}
	for _, u := range insts {
		got := read(u)
		p, _, _ := unstructured.NestedMap(got.Object, "status", "revisionPreview")
		n := func(k string) int64 { v, _ := p[k].(int64); return v }
		if p["revision"] != to || [4]int64{n("add"), n("change"), n("destroy"), n("replace")} != wantCounts[u.GetName()] {
			t.Errorf("%s: want a preview of %s with +~-± %v, got %v", u.GetName(), to, wantCounts[u.GetName()], p)
		}
		if cur, _, _ := unstructured.NestedString(got.Object, "status", "moduleRevision"); cur != revs[u.GetName()] {
			t.Errorf("%s moved to %s before promotion", u.GetName(), cur)
		}
		if v := stateVersion(u); v != states[u.GetName()] {
			t.Errorf("%s: the preview changed the state Secret (resourceVersion %s, was %s)", u.GetName(), v, states[u.GetName()])
		}
		var plans []string
		for _, r := range runsOf(t, c, u) {
			if r.Spec.Operation == v1alpha1.OperationPlan {
				plans = append(plans, fmt.Sprintf("%s %s %s", r.Name, r.Status.Phase, r.Status.Executor))
				if r.Status.Phase != v1alpha1.PhaseSucceeded || r.Status.Executor != v1alpha1.ExecutorJob {
					t.Errorf("%s: Plan Run %s: want Succeeded by a job, got %s by %q: %s", u.GetName(), r.Name, r.Status.Phase, r.Status.Executor, r.Status.Message)
				}
			}
		}
		if len(plans) != 1 {
			t.Errorf("%s: want one Plan Run, got %v", u.GetName(), plans)
		}
	}
	forgePlanResults(t, g, insts[0])

	// Promoted, each instance plans v2 for real, through the guard: terraform's own plan (its Apply
	// Run's) has the preview's counts, and no forged Plan result was taken for an apply.
	if err := c.Get(ctx, client.ObjectKey{Name: name}, m); err != nil {
		t.Fatal(err)
	}
	m.Annotations = map[string]string{v1alpha1.AnnotationPromote: "1"}
	if err := c.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	refused := map[string]bool{"replace-a": true}
	for _, u := range insts {
		var seen []string
		err := pollErr(5*time.Minute, func(ctx context.Context) (bool, error) {
			seen = nil
			runs := runsOf(t, c, u)
			digest := ""
			for _, r := range runs {
				if r.Spec.Operation == v1alpha1.OperationPlan {
					digest = r.Spec.ModuleDigest
				}
			}
			for _, r := range runs {
				if r.Spec.Operation != v1alpha1.OperationApply || r.Spec.ModuleDigest != digest {
					continue
				}
				p := r.Status.Plan
				if p == nil {
					p = &v1alpha1.RunPlan{}
				}
				seen = append(seen, fmt.Sprintf("%s %s +%d ~%d -%d", r.Name, r.Status.Phase, p.Add, p.Change, p.Destroy))
				want := wantCounts[u.GetName()]
				phase := map[bool]v1alpha1.RunPhase{true: v1alpha1.PhaseRefused, false: v1alpha1.PhaseSucceeded}[refused[u.GetName()]]
				if r.Status.Phase == phase && [3]int64{p.Add, p.Change, p.Destroy} == [3]int64{want[0], want[1], want[2]} {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			g.logRuns(t)
			t.Fatalf("%s after promote: want an Apply Run of the previewed revision %s by the guard with +~- %v, got %v",
				u.GetName(), map[bool]string{true: "refused", false: "succeeding"}[refused[u.GetName()]], wantCounts[u.GetName()], seen)
		}
		cur := ""
		if err := pollErr(time.Minute, func(ctx context.Context) (bool, error) {
			cur, _, _ = unstructured.NestedString(read(u).Object, "status", "moduleRevision")
			return (cur == to) != refused[u.GetName()], nil
		}); err != nil {
			t.Errorf("%s after promote: on %s; want it on %s unless the guard refused it", u.GetName(), cur, to)
		}
	}
}

// previewFleet is a job-mode controller with the tenants team-a and team-b, and a Module of
// previewJobModule's v1 from a git repository, rolled out Manually: what the previews in job mode
// start from.
type previewFleet struct {
	g    *jobGround
	gvk  schema.GroupVersionKind
	name string
	repo string
}

// startPreviewFleet starts a previewFleet whose Module, name, makes the kind Tiered of group.
func startPreviewFleet(t *testing.T, group, name string) *previewFleet {
	t.Helper()
	g := startJobGround(t)
	g.startJobController(t, g.jobControllerArgs(t))
	watchActiveRuns(t, g.c)
	g.tenant(t, "team-a")
	g.tenant(t, "team-b")
	f := &previewFleet{g: g, gvk: schema.GroupVersionKind{Group: group, Version: "v1alpha1", Kind: "Tiered"}, name: name, repo: previewRepo(t)}
	poll(t, "the Module CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) {
		return g.c.Create(ctx, &v1alpha1.Module{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ModuleSpec{Source: v1alpha1.ModuleSource{URL: "git::file://" + f.repo + "?ref=v1"},
				CRD: v1alpha1.CRDNames{Group: f.gvk.Group, Kind: f.gvk.Kind}, Rollout: &v1alpha1.Rollout{Policy: v1alpha1.RolloutManual}},
		}) == nil, nil
	})
	return f
}

// tiered is an instance of the kind Tiered: its namespace, name, tier, and the ProviderConfig it
// names (the namespace's default when empty).
type tiered struct{ ns, name, tier, providerConfig string }

// create creates the instances, once their kind is served, in order.
func (f *previewFleet) create(t *testing.T, instances []tiered) []*unstructured.Unstructured {
	t.Helper()
	var insts []*unstructured.Unstructured
	for _, i := range instances {
		spec := map[string]any{"forProvider": map[string]any{"name": i.name, "tier": i.tier}}
		if i.providerConfig != "" {
			spec["providerConfigRef"] = map[string]any{"name": i.providerConfig}
		}
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetGroupVersionKind(f.gvk)
		u.SetNamespace(i.ns)
		u.SetName(i.name)
		poll(t, "the Tiered CRD to be served", 2*time.Minute, func(ctx context.Context) (bool, error) { return f.g.c.Create(ctx, u) == nil, nil })
		insts = append(insts, u)
	}
	return insts
}

// moveToV2 points the Module at the tag v2, which its Manual rollout previews, and returns it.
func (f *previewFleet) moveToV2(t *testing.T) *v1alpha1.Module {
	t.Helper()
	ctx := context.Background()
	m := &v1alpha1.Module{}
	if err := f.g.c.Get(ctx, client.ObjectKey{Name: f.name}, m); err != nil {
		t.Fatal(err)
	}
	m.Spec.Source.URL = "git::file://" + f.repo + "?ref=v2"
	if err := f.g.c.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// runnerAccount is a client acting as ns's runner service account, as anyone with edit in ns may.
func runnerAccount(t *testing.T, g *jobGround, ns string) client.Client {
	t.Helper()
	cs, err := kubernetes.NewForConfig(g.cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), jobexec.DefaultRunnerServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	as := rest.AnonymousClientConfig(g.cfg)
	as.BearerToken = tr.Status.Token
	c, err := client.New(as, client.Options{Scheme: g.c.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// forgePlanResults rewrites, with the tenant's runner service account (which anyone with edit in
// the namespace may act as), the result of u's Plan Runs: counts, a state serial, Succeeded. Such
// a result is only ever shown; the caller checks that nothing is applied or stored from it.
func forgePlanResults(t *testing.T, g *jobGround, u *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	runner := runnerAccount(t, g, u.GetNamespace())
	forged := 0
	for _, r := range runsOf(t, g.c, u) {
		if r.Spec.Operation != v1alpha1.OperationPlan {
			continue
		}
		r.Status.Phase, r.Status.StateSerial = v1alpha1.PhaseSucceeded, ptr.To[int64](99)
		r.Status.Plan = &v1alpha1.RunPlan{Add: 7, Change: 7, Destroy: 7, Replace: 7, Summary: "+7 ~7 -7"}
		if err := runner.Status().Update(ctx, &r); err != nil {
			t.Fatalf("the runner account rewriting Plan Run %s: %v", r.Name, err)
		}
		forged++
	}
	if forged == 0 {
		t.Fatalf("%s has no Plan Run to forge", u.GetName())
	}
}

// pollErr polls cond every 250 ms until it holds or timeout passes.
func pollErr(timeout time.Duration, cond func(ctx context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		if ok, err := cond(ctx); ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
