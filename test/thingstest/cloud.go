package thingstest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Cloud is the directory terraform-provider-things keeps its objects in:
//
//	<Dir>/<resource_type>/<id>.json   an object's attributes and "status" ("creating", "ready")
//	<Dir>/<resource_type>.log         "created <id>", "updated <id>", "deleted <id>", "imported <id>"
//	<Dir>/fail-create, fail-delete    while present, creates (deletes) fail with their content
//
// Methods fail the test on I/O errors, so call them from the test's goroutine. Objects decode as
// encoding/json does into any: numbers are float64.
type Cloud struct {
	Dir string
	tb  testing.TB
}

// NewCloud returns an empty cloud in a temporary directory of t.
func NewCloud(t testing.TB) *Cloud {
	return &Cloud{Dir: t.TempDir(), tb: t}
}

// Env is the environment variable that points the provider at the cloud when its configuration
// names no directory.
func (c *Cloud) Env() string { return "THINGS_DIR=" + c.Dir }

// Objects returns the objects of a resource type by id.
func (c *Cloud) Objects(typ string) map[string]map[string]any {
	c.helper()
	entries, err := os.ReadDir(filepath.Join(c.Dir, typ))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.fatal(err)
	}
	objs := map[string]map[string]any{}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(id, ".") {
			continue // a temporary file
		}
		if obj := c.Object(typ, id); obj != nil {
			objs[id] = obj
		}
	}
	return objs
}

// Object returns one object, nil when there is none.
func (c *Cloud) Object(typ, id string) map[string]any {
	c.helper()
	b, err := os.ReadFile(c.path(typ, id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var obj map[string]any
	if err == nil {
		err = json.Unmarshal(b, &obj)
	}
	if err != nil {
		c.fatal(err)
	}
	return obj
}

// Put creates or replaces an object out of band, as if made outside Terraform (to import it).
// The provider reads what attributes it finds; "id" defaults to id and "status" to "ready".
func (c *Cloud) Put(typ, id string, attrs map[string]any) {
	c.helper()
	obj := map[string]any{"id": id, "status": "ready"}
	for k, v := range attrs {
		obj[k] = v
	}
	c.write(typ, id, obj)
}

// Edit changes an object out of band (drift). It fails the test when there is no such object.
func (c *Cloud) Edit(typ, id string, edit func(obj map[string]any)) {
	c.helper()
	obj := c.Object(typ, id)
	if obj == nil {
		c.fatalf("thingstest: no %s %q to edit", typ, id)
	}
	edit(obj)
	c.write(typ, id, obj)
}

// Remove deletes an object out of band; Terraform then finds it gone.
func (c *Cloud) Remove(typ, id string) {
	c.helper()
	if err := os.Remove(c.path(typ, id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.fatal(err)
	}
}

// Log returns the lines of a resource type's log, in order ("created <id>", ...).
func (c *Cloud) Log(typ string) []string {
	c.helper()
	b, err := os.ReadFile(filepath.Join(c.Dir, typ+".log"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		c.fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// Count returns how many events ("created", "updated", "deleted", "imported") a resource type's
// log has.
func (c *Cloud) Count(typ, event string) int {
	c.helper()
	n := 0
	for _, l := range c.Log(typ) {
		if strings.HasPrefix(l, event+" ") {
			n++
		}
	}
	return n
}

// FailCreate makes every create fail, with an error that includes msg, until ClearFailCreate.
func (c *Cloud) FailCreate(msg string) { c.helper(); c.setFail("create", msg) }

// FailDelete makes every delete fail, with an error that includes msg, until ClearFailDelete.
func (c *Cloud) FailDelete(msg string) { c.helper(); c.setFail("delete", msg) }

// ClearFailCreate lets creates succeed again.
func (c *Cloud) ClearFailCreate() { c.helper(); c.clearFail("create") }

// ClearFailDelete lets deletes succeed again.
func (c *Cloud) ClearFailDelete() { c.helper(); c.clearFail("delete") }

func (c *Cloud) setFail(op, msg string) {
	if err := os.WriteFile(filepath.Join(c.Dir, "fail-"+op), []byte(msg), 0o644); err != nil {
		c.fatal(err)
	}
}

func (c *Cloud) clearFail(op string) {
	if err := os.Remove(filepath.Join(c.Dir, "fail-"+op)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.fatal(err)
	}
}

func (c *Cloud) path(typ, id string) string { return filepath.Join(c.Dir, typ, id+".json") }

// write replaces an object atomically, as the provider does.
func (c *Cloud) write(typ, id string, obj map[string]any) {
	b, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		c.fatal(err)
	}
	dir := filepath.Join(c.Dir, typ)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.fatal(err)
	}
	f, err := os.CreateTemp(dir, "."+id+".*.tmp")
	if err != nil {
		c.fatal(err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), c.path(typ, id))
	}
	if err != nil {
		os.Remove(f.Name())
		c.fatal(err)
	}
}

func (c *Cloud) helper() {
	if c.tb != nil {
		c.tb.Helper()
	}
}

func (c *Cloud) fatal(err error) { c.fatalf("thingstest: %v", err) }

func (c *Cloud) fatalf(format string, args ...any) {
	if c.tb == nil {
		panic(fmt.Sprintf(format, args...))
	}
	c.tb.Helper()
	c.tb.Fatalf(format, args...)
}
