package terraform

import (
	"os/exec"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// Binary resolves the terraform executable: the given one, else terraform or tofu on PATH.
func Binary(given string) (string, error) {
	if given != "" {
		p, err := exec.LookPath(given)
		return p, errors.Wrapf(err, "terraform binary %q", given)
	}
	for _, name := range []string{"terraform", "tofu"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no terraform binary found: neither terraform nor tofu is on PATH; install one or pass --terraform-binary")
}
