package dashboard

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/modkind/modkind/apis/v1alpha1"
)

// The Instance page shows what the instance and its Runs say as text, and a dashboard limited to
// one namespace shows no instance of another.
func TestInstancePage(t *testing.T) {
	src := &fakeSource{instance: InstanceDetail{Kind: "Bucket.example.org", Namespace: "team-a", Name: "logs", Generation: 3,
		Spec: `{"name": "<b>logs</b>"}`, Outputs: `{"arn": "arn:aws:s3:::logs"}`,
		Conditions: []Condition{{Type: "Synced", Status: "False", Reason: "ReconcileError", Message: "terraform apply failed: <script>x</script>"}},
		Inputs:     []Wire{{Field: "vpcIdFrom", Kind: "Network network.example.org/v1alpha1", Name: "net", Key: "id"}},
		Runs:       []RunRow{{Name: "logs-apply-1", Operation: "Apply", Phase: "Failed", Log: "Error: <img src=x>", Message: "failed"}}}}
	for name, tc := range map[string]struct {
		reason    string
		opts      Options
		target    string
		wantCode  int
		wantTexts []string
	}{
		"Shown": {reason: "The instance's spec, outputs, conditions, wiring and Runs are shown, as text.", target: "/instances/Bucket.example.org/team-a/logs", wantCode: http.StatusOK,
			wantTexts: []string{"&lt;b&gt;logs&lt;/b&gt;", "arn:aws:s3:::logs", "terraform apply failed: &lt;script&gt;x&lt;/script&gt;", "vpcIdFrom ← Network network.example.org/v1alpha1 net (id)", "Error: &lt;img src=x&gt;", `data-events="/events?instance=Bucket.example.org/team-a/logs"`}},
		"OtherNamespace": {reason: "A dashboard started with -n shows no instance of another namespace.", opts: Options{Namespace: "team-b"},
			target: "/instances/Bucket.example.org/team-a/logs", wantCode: http.StatusBadGateway},
	} {
		t.Run(name, func(t *testing.T) {
			_, h, cookie := newTestServer(t, src, tc.opts)
			r := httptest.NewRequest(http.MethodGet, "http://"+addr+tc.target, nil)
			r.AddCookie(cookie)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.wantCode {
				t.Fatalf("\n%s\nGET %s: %d, want %d\n%s", tc.reason, tc.target, w.Code, tc.wantCode, w.Body.String())
			}
			for _, want := range tc.wantTexts {
				if !strings.Contains(w.Body.String(), want) {
					t.Errorf("\n%s\nthe page lacks %q:\n%s", tc.reason, want, w.Body.String())
				}
			}
			if strings.Contains(w.Body.String(), "<script>x") || strings.Contains(w.Body.String(), "<img src=x") {
				t.Errorf("\n%s\ntext from the cluster became HTML", tc.reason)
			}
		})
	}
}

// A Run's log is the one on the Run, in both modes; a Run without one yet shows its runner pod's
// (job mode), its tail read with the user's credentials, or says why it has none.
func TestRunsOf(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	inst := &unstructured.Unstructured{}
	inst.SetNamespace("team-a")
	inst.SetName("logs")
	inst.SetUID(types.UID("uid-1"))
	run := func(name string, minute int) *v1alpha1.Run {
		return &v1alpha1.Run{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, Labels: map[string]string{v1alpha1.LabelInstanceUID: "uid-1"},
			CreationTimestamp: metav1.Date(2026, 11, 28, 15, minute, 0, 0, metav1.Now().Location())},
			Spec: v1alpha1.RunSpec{Operation: v1alpha1.OperationApply}, Status: v1alpha1.RunStatus{Phase: v1alpha1.PhaseRunning}}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "logs-job-1-x", Labels: map[string]string{labelRun: "job-1"}}}
	ended := run("ended-1", 3)
	ended.Status.Phase, ended.Status.Log = v1alpha1.PhaseSucceeded, "$ terraform apply\nApply complete!\n"
	endedPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "logs-ended-1-x", Labels: map[string]string{labelRun: "ended-1"}}}
	c := &Cluster{Client: fake.NewClientBuilder().WithScheme(s).WithObjects(run("process-1", 1), run("job-1", 2), pod, ended, endedPod).Build(),
		Logs: func(_ context.Context, ns, name string, tail int64) (io.ReadCloser, error) {
			if tail != maxLogLines {
				t.Errorf("the log's tail should be %d lines, asked %d", maxLogLines, tail)
			}
			return io.NopCloser(strings.NewReader("log of " + ns + "/" + name)), nil
		}}
	var got []string
	for _, r := range c.runsOf(context.Background(), inst) {
		got = append(got, r.Name+": "+r.Log+r.LogNote)
	}
	want := []string{"ended-1: $ terraform apply\nApply complete!\n", "job-1: log of team-a/logs-job-1-x", "process-1: no log yet: a Run shows its log once it ends (in job mode its runner pod shows it as it goes; this Run has no pod)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("\nRuns newest first, each with its log, its pod's or why none.\n-want +got\n%s", diff)
	}
}
