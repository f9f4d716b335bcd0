package terraform

import (
	"context"
	"reflect"
	"sync"
	"unsafe"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// Versions learns a terraform binary's version once and gives it to every tfexec.Terraform value
// made afterwards. terraform-exec checks the version before most commands and caches it per value
// only; modkind makes a value per run, so without this every run would start one `terraform
// version` more than its result needs. A Harness has one; a runner pool's pod, which makes a
// Harness per Run, gives each the one it keeps for its life (Harness.Versions).
//
// terraform-exec offers no way to hand a value a version it already knows, so the cached field is
// set by reflection. Where a later terraform-exec names it differently, nothing is set and
// terraform-exec checks the version itself, as it would without this: slower, never wrong.
type Versions struct {
	mu      sync.Mutex
	learned reflect.Value
}

// fieldExecVersion is where terraform-exec caches the version of its binary.
const fieldExecVersion = "execVersion"

// seed gives tf the version learned from an earlier value, learning it from tf (one `terraform
// version`) the first time. Without Versions (nil), terraform-exec checks the version itself.
func (v *Versions) seed(ctx context.Context, tf *tfexec.Terraform) error {
	f := cachedVersion(tf)
	if v == nil || !f.IsValid() {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.learned.IsValid() {
		f.Set(v.learned)
		return nil
	}
	if _, _, err := tf.Version(ctx, false); err != nil {
		return err
	}
	learned := reflect.New(f.Type()).Elem()
	learned.Set(f)
	if !learned.IsNil() {
		v.learned = learned
	}
	return nil
}

// cachedVersion is tf's settable version cache, invalid when terraform-exec has none of that
// name and type (a pointer).
func cachedVersion(tf *tfexec.Terraform) reflect.Value {
	f := reflect.ValueOf(tf).Elem().FieldByName(fieldExecVersion)
	if !f.IsValid() || f.Kind() != reflect.Pointer {
		return reflect.Value{}
	}
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}
