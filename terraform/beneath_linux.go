package terraform

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// writeBeneath writes data to the file rel below dir, creating the directories between, without
// ever following a symbolic link or leaving dir: openat2 resolves each step with
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, so a link planted in the work directory (by a provider, or
// by a run before) makes the write fail instead of landing elsewhere.
func writeBeneath(dir, rel string, data []byte) error {
	const resolve = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_RDONLY, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for _, p := range parts[:len(parts)-1] {
		if err := unix.Mkdirat(fd, p, 0o700); err != nil && err != unix.EEXIST {
			unix.Close(fd)
			return &os.PathError{Op: "mkdir", Path: filepath.Join(dir, rel), Err: err}
		}
		next, err := unix.Openat2(fd, p, &unix.OpenHow{Flags: unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_RDONLY, Resolve: resolve})
		unix.Close(fd)
		if err != nil {
			return &os.PathError{Op: "open", Path: filepath.Join(dir, rel), Err: err}
		}
		fd = next
	}
	f, err := unix.Openat2(fd, parts[len(parts)-1], &unix.OpenHow{
		Flags: unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC | unix.O_NOFOLLOW | unix.O_CLOEXEC, Mode: 0o600, Resolve: resolve,
	})
	unix.Close(fd)
	if err != nil {
		return &os.PathError{Op: "create", Path: filepath.Join(dir, rel), Err: err}
	}
	file := os.NewFile(uintptr(f), filepath.Join(dir, rel))
	if _, err := file.Write(data); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}
