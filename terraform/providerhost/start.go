package providerhost

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Host is a provider host this process started.
type Host struct {
	Handshake
	cmd *exec.Cmd
	// controller is the host's standard input: closing it lets the host go.
	controller io.Closer
	exited     chan struct{}
}

// Start starts exe (this process's own executable, or any that imports this package) as the host
// of the provider executable binary, in dir, which must exist and belong to the host alone, with
// env as the provider's whole environment and workDir as its working directory (dir when empty).
// It returns once the proxy serves.
func Start(ctx context.Context, exe, binary, dir, workDir string, env map[string]string) (*Host, error) {
	cmd := exec.Command(exe) //nolint:gosec // The controller's own executable.
	cmd.Dir = dir
	for k, v := range env {
		if k != EnvBinary && k != EnvWorkDir {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.Env = append(cmd.Env, EnvBinary+"="+binary)
	if workDir != "" {
		cmd.Env = append(cmd.Env, EnvWorkDir+"="+workDir)
	}
	cmd.SysProcAttr = hostAttr()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &Host{cmd: cmd, controller: in, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(h.exited) }()

	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- l
	}()
	select {
	case l := <-line:
		if err := json.Unmarshal([]byte(l), &h.Handshake); err != nil || (h.Error == "" && h.Socket == "") {
			h.kill()
			return nil, fmt.Errorf("provider host %s: no handshake", filepath.Base(binary))
		}
	case <-ctx.Done():
		h.kill()
		return nil, ctx.Err()
	case <-time.After(handshakeTimeout + stopTimeout):
		h.kill()
		return nil, fmt.Errorf("provider host %s: no handshake", filepath.Base(binary))
	}
	if h.Error != "" {
		h.kill()
		return nil, errors.New(h.Error)
	}
	return h, nil
}

// Release lets the host go: it ends once no terraform is connected to it.
func (h *Host) Release() { _ = h.controller.Close() }

// Exited is closed once the host has ended.
func (h *Host) Exited() <-chan struct{} { return h.exited }

// Stop lets the host go and waits at most timeout for it to end.
func (h *Host) Stop(timeout time.Duration) {
	h.Release()
	select {
	case <-h.exited:
	case <-time.After(timeout):
	}
}

func (h *Host) kill() {
	_ = h.controller.Close()
	_ = h.cmd.Process.Kill()
	<-h.exited
}

// RSS is the provider's resident memory in bytes, 0 when it cannot be read.
func (h *Host) RSS() int64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(h.Pid), "status"))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
