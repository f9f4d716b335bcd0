//go:build !linux

package terraform

import (
	"os"
	"path/filepath"
)

// writeBeneath writes data to the file rel below dir through an os.Root, which refuses to leave
// dir. Unlike the Linux version it follows links that stay inside dir.
func writeBeneath(dir, rel string, data []byte) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if d := filepath.Dir(rel); d != "." {
		if err := root.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	return root.WriteFile(rel, data, 0o600)
}
