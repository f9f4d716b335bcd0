package process

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestWorkDir(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: strings.Repeat("g", 60) + "." + strings.Repeat("h", 60) + "." + strings.Repeat("i", 60) + ".example.org", Kind: "Bucket"}
	dir := WorkDir("/work", gvk, "ns", strings.Repeat("n", 253), "0c7f6ae3-5d4d-4ab9-8b0a-3f8d2c1e9b7a")
	for _, el := range strings.Split(dir, "/") {
		if len(el) > 255 {
			t.Errorf("path element of %d bytes: no file system takes it", len(el))
		}
	}
	if !strings.HasSuffix(dir, ".0c7f6ae3-5d4d-4ab9-8b0a-3f8d2c1e9b7a") {
		t.Errorf("the work directory must end with the instance's UID, got %s", dir)
	}
}
