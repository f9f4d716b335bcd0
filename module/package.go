package module

import (
	"path/filepath"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// PackageOf splits a module directory in the module cache at root into the package snapshot that
// holds it (the first directory below root) and the module's path within the package. The whole
// package is what a run needs, so that the module's calls of sibling directories resolve.
func PackageOf(root, dir string) (pkg, path string, err error) {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", "", errors.Errorf("module directory %s is not in the module cache", dir)
	}
	parts := strings.SplitN(filepath.ToSlash(rel), "/", 2)
	if len(parts) == 2 {
		path = parts[1]
	}
	return filepath.Join(root, parts[0]), path, nil
}
