package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// callCount is how many terraform processes either side started so far.
func (b *bench) callCount() int { return countLines(b.calls, "") }

// providerCount is how many things provider processes anyone started so far.
func (b *bench) providerCount() int { return countLines(b.providerStarts, "") }

// initCount is how many of them were terraform init.
func (b *bench) initCount() int { return countLines(b.calls, "init") }

// countLines counts the lines of file that are word, or all its lines when word is empty.
func countLines(file, word string) int {
	raw, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	if word == "" {
		return bytes.Count(raw, []byte("\n"))
	}
	n := 0
	for _, l := range strings.Split(string(raw), "\n") {
		if l == word {
			n++
		}
	}
	return n
}

// cpuOf is the CPU time of process pid and of all its descendants: those it waited for
// (terraform, and the providers terraform waited for) and those still running (shared provider
// processes, which outlive the runs they served). A descendant that ends moves its time into its
// parent's count of waited-for children, so the sum never jumps.
func cpuOf(pid int) time.Duration {
	// utime, stime, cutime, cstime are fields 14-17 of stat.
	var total time.Duration
	for _, p := range descendantsAndSelf(pid) {
		total += statTicks(p, 14, 15, 16, 17)
	}
	return total
}

// descendantsAndSelf is pid and every running process below it.
func descendantsAndSelf(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		// The parent's pid is field 4, the second after the command name.
		f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	all := []int{pid}
	for i := 0; i < len(all); i++ {
		all = append(all, children[all[i]]...)
	}
	return all
}

// ownCPUOf is the CPU time of process pid alone: the controller's own work, without terraform's.
func ownCPUOf(pid int) time.Duration {
	return statTicks(pid, 14, 15)
}

// statTicks sums fields of /proc/<pid>/stat that count clock ticks.
func statTicks(pid int, fields ...int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: fields are counted after it; f starts
	// at field 3.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	var ticks int64
	for _, i := range fields {
		v, _ := strconv.ParseInt(f[i-3], 10, 64)
		ticks += v
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// treeTicks is the CPU time of process pid's descendants, live or ended: what pid reaped of its
// children (cutime, cstime), and each live descendant's own time and what it reaped. A CPU
// second is counted once whenever it is read: by the live process that spent it, or by the
// nearest ancestor that reaped it. pid's own time is left out.
func treeTicks(pid int) time.Duration {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if parent, ok := parentOf(child); ok {
			children[parent] = append(children[parent], child)
		}
	}
	total := statTicks(pid, 16, 17)
	for todo := children[pid]; len(todo) > 0; {
		p := todo[len(todo)-1]
		todo = append(todo[:len(todo)-1], children[p]...)
		total += statTicks(p, 14, 15, 16, 17)
	}
	return total
}

// parentOf is process pid's parent, from /proc/<pid>/stat.
func parentOf(pid int) (int, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	if len(f) < 2 {
		return 0, false
	}
	parent, err := strconv.Atoi(f[1])
	return parent, err == nil
}

// peakRSS is process pid's peak resident set size in KiB (VmHWM).
func peakRSS(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// apiServerCPU is the CPU time so far of the API server and etcd that this process started.
func apiServerCPU() time.Duration {
	var total time.Duration
	for _, pid := range childPIDs(os.Getpid()) {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil {
			continue
		}
		switch strings.TrimSpace(string(comm)) {
		case "kube-apiserver", "etcd":
			total += ownCPUOf(pid)
		}
	}
	return total
}

// childPIDs are the pids of process pid's children.
func childPIDs(pid int) []int {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil
	}
	var pids []int
	for _, t := range tasks {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(raw)) {
			if p, err := strconv.Atoi(f); err == nil {
				pids = append(pids, p)
			}
		}
	}
	return pids
}
