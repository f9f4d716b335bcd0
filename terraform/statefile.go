package terraform

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// waitStateUnlocked waits until no terraform holds the state file in dir: a terraform left
// running by a controller that died may still be finishing, and its state must not be touched
// until it has.
func waitStateUnlocked(ctx context.Context, path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	lock := syscall.Flock_t{Type: syscall.F_WRLCK}
	for {
		err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lock)
		if err == nil {
			unlock := syscall.Flock_t{Type: syscall.F_UNLCK}
			return syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &unlock)
		}
		if !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EACCES) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
