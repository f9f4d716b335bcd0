package main

import (
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A cloud provider's package is hundreds of MB (the AWS provider's executable is over 600 MB
// unpacked); the things provider is a few. -provider-payload-mib makes the things provider the
// mirror serves that size: the file in the mirror (the wrapper that counts starts and execs the
// real provider) gets that many MiB of random bytes after its last line, which the shell never
// reads (it has exec'ed the provider by then) but which every install copies, hashes and, from
// the controller's provider mirror, downloads and unzips. Random bytes, so that the zip the
// mirror serves is as large as the file.

// payloadFile returns a file of mib MiB of random bytes in modkind's cache (MODKIND_CACHE, or
// modkind in the user cache directory), made once per size and never committed.
func payloadFile(mib int) (string, error) {
	cache := os.Getenv("MODKIND_CACHE")
	if cache == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(base, "modkind")
	}
	dir := filepath.Join(cache, "thingsprovider")
	path := filepath.Join(dir, fmt.Sprintf("payload-%dMiB", mib))
	if st, err := os.Stat(path); err == nil && st.Size() == int64(mib)<<20 {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".payload-")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.CopyN(tmp, rand.Reader, int64(mib)<<20); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	// Renamed into place whole: a benchmark running at once never reads half a payload.
	return path, os.Rename(tmp.Name(), path)
}

// addPayload appends the payload of mib MiB to every things provider file in the mirror below
// dir (the wrappers that count provider starts, which end with the line that execs the provider).
func addPayload(dir string, mib int) error {
	if mib <= 0 {
		return nil
	}
	src, err := payloadFile(mib)
	if err != nil {
		return fmt.Errorf("the provider payload: %w", err)
	}
	bins, err := filepath.Glob(filepath.Join(dir, "mirror", "*", "*", "*", "*", "*", "terraform-provider-things_v*"))
	if err != nil || len(bins) == 0 {
		return fmt.Errorf("no things provider in the mirror in %s (%v)", dir, err)
	}
	for _, bin := range bins {
		if err := appendFile(bin, src); err != nil {
			return fmt.Errorf("the provider payload: %w", err)
		}
	}
	return nil
}

// appendFile appends the content of src to dst.
func appendFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
