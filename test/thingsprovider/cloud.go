package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Object statuses.
const (
	statusCreating = "creating"
	statusReady    = "ready"
)

// errExists is returned by cloud.create when an object with that id exists.
var errExists = errors.New("already exists")

// cloud is the on-disk cloud: see the package documentation for its layout.
type cloud struct{ dir string }

func (c *cloud) path(typ, id string) string {
	return filepath.Join(c.dir, typ, id+".json")
}

// read decodes the object typ/id into obj; found is false when there is no such object.
func (c *cloud) read(typ, id string, obj any) (found bool, err error) {
	if err := checkID(id); err != nil {
		return false, err
	}
	b, err := os.ReadFile(c.path(typ, id))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, obj); err != nil {
		return true, fmt.Errorf("%s: %w", c.path(typ, id), err)
	}
	return true, nil
}

// create writes a new object atomically and fails with errExists when typ/id exists.
func (c *cloud) create(typ, id string, obj any) error {
	tmp, err := c.temp(typ, id, obj)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	// A hard link, unlike a rename, refuses to replace an existing file.
	if err := os.Link(tmp, c.path(typ, id)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s %q: %w", typ, id, errExists)
		}
		return err
	}
	return nil
}

// write replaces (or creates) an object atomically.
func (c *cloud) write(typ, id string, obj any) error {
	tmp, err := c.temp(typ, id, obj)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, c.path(typ, id)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// temp writes obj to a temporary file next to the object's file and returns its path.
func (c *cloud) temp(typ, id string, obj any) (string, error) {
	if err := checkID(id); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(c.dir, typ)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "."+id+".*.tmp")
	if err != nil {
		return "", err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// remove deletes an object; a missing one is not an error (found reports whether it existed).
func (c *cloud) remove(typ, id string) (found bool, err error) {
	if err := checkID(id); err != nil {
		return false, err
	}
	err = os.Remove(c.path(typ, id))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// log appends "<event> <id>" to <dir>/<typ>.log with one write to a file opened O_APPEND, so
// lines of concurrent processes do not interleave.
func (c *cloud) log(typ, event, id string) error {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(c.dir, typ+".log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(event + " " + id + "\n"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// failure reports whether <dir>/fail-<op> exists, and its content.
func (c *cloud) failure(op string) (msg string, fail bool) {
	b, err := os.ReadFile(filepath.Join(c.dir, "fail-"+op))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		return err.Error(), true
	}
	return strings.TrimSpace(string(b)), true
}

// checkID refuses ids that would name a file outside the resource type's directory.
func checkID(id string) error {
	if id == "" || id != filepath.Base(id) || strings.HasPrefix(id, ".") {
		return fmt.Errorf("invalid id %q", id)
	}
	return nil
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
