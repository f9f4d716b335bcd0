package integration

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/modkind/modkind/executor/process"
)

// An Observe-only instance of a resource kind shows in status.atProvider what the real object
// has now: a change made in the cloud outside modkind is published, and never undone.
func TestObserveOnlyFollowsTheCloud(t *testing.T) {
	ctx := context.Background()
	ns, cloud := cloudNamespace(t)
	_, gvk := resourceKind(t, "r-buckets-observe", "things_bucket", "observe.things.example.org", "Bucket")

	inst := newInstance(gvk, ns, "watched", map[string]any{
		"forProvider":       map[string]any{"name": "watched-bucket", "tags": map[string]any{"team": "a"}},
		"providerConfigRef": map[string]any{"name": "default"},
	})
	if err := ground.client.Create(ctx, inst); err != nil {
		t.Fatal(err)
	}
	got := waitInstance(t, inst, 1)
	if tags, _, _ := unstructured.NestedMap(got.Object, "status", "atProvider", "tags"); tags["team"] != "a" {
		t.Fatalf("status.atProvider.tags: want the applied team a, got %v", tags)
	}
	dir := process.WorkDir(ground.config.Dir+"/work", gvk, ns, "watched", got.GetUID())

	patchSpec(t, inst, `{"managementPolicies":["Observe"]}`)
	observed := waitInstance(t, inst, got.GetGeneration()+1)
	created, updated := cloud.Count("things_bucket", "created"), cloud.Count("things_bucket", "updated")

	outside := map[string]any{"team": "b", "changed": "outside"}
	cloud.Edit("things_bucket", "watched-bucket", func(obj map[string]any) { obj["tags"] = outside })
	eventually(t, "status.atProvider.tags to follow the cloud", func(ctx context.Context) (bool, error) {
		if err := ground.client.Get(ctx, client.ObjectKeyFromObject(inst), observed); err != nil {
			return false, err
		}
		tags, _, _ := unstructured.NestedMap(observed.Object, "status", "atProvider", "tags")
		return cmp.Equal(tags, outside), nil
	})
	// Two more terraform runs are two more observations: had one of them written the spec's tags
	// back, the cloud would show it by now.
	runs := len(terraformRuns(t, dir))
	eventually(t, "two more observations", func(context.Context) (bool, error) {
		return len(terraformRuns(t, dir)) >= runs+2, nil
	})
	if diff := cmp.Diff(outside, cloud.Object("things_bucket", "watched-bucket")["tags"]); diff != "" {
		t.Errorf("an Observe-only instance changed the bucket's tags (-set outside +now):\n%s", diff)
	}
	if c, u := cloud.Count("things_bucket", "created"), cloud.Count("things_bucket", "updated"); c != created || u != updated {
		t.Errorf("an Observe-only instance created or updated buckets, log %v", cloud.Log("things_bucket"))
	}
	if tags, _, _ := unstructured.NestedMap(observed.Object, "spec", "forProvider", "tags"); tags["team"] != "a" {
		t.Errorf("spec.forProvider.tags must stay as written, got %v", tags)
	}

	// Back under full management the instance is deleted as usual, and its bucket with it.
	patchSpec(t, inst, `{"managementPolicies":["*"]}`)
	waitInstance(t, inst, observed.GetGeneration()+1)
	if err := ground.client.Delete(ctx, inst); err != nil {
		t.Fatal(err)
	}
	waitGone(t, inst)
	if objects := cloud.Objects("things_bucket"); len(objects) != 0 {
		t.Errorf("cloud: deleting the instance must destroy the bucket, left %v", objects)
	}
}
