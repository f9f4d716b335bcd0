package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The API server writes an audit event for every request it completes, to a log the benchmark
// reads between the marks of each phase: that gives the requests a side makes per instance, by
// client, verb and resource, the figure the README's Performance section lists. Watches are left
// out (one per informer, whatever N is), and so are the benchmark's own requests.

// auditPolicy records every request at the Metadata level (no bodies: the log stays small), once,
// when its response is complete.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted", "Panic"]
rules:
- level: Metadata
`

// auditRequests has the API server env starts write its audit log into dir, and returns the log.
func auditRequests(env *envtest.Environment, dir string) (*apiLog, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return nil, err
	}
	l := &apiLog{path: filepath.Join(dir, "audit.log")}
	args := env.ControlPlane.GetAPIServer().Configure()
	args.Set("audit-policy-file", policy)
	args.Set("audit-log-path", l.path)
	args.Set("audit-log-format", "json")
	// The log rotates at 100 MB unless told otherwise; a count from a mark would then read the
	// new file from the middle of a line. 10,000 instances log about half a gigabyte.
	args.Set("audit-log-maxsize", "1000000")
	// Blocking: every request is in the log by the time its response is.
	args.Set("audit-log-mode", "blocking")
	return l, nil
}

// apiLog is the API server's audit log.
type apiLog struct{ path string }

// mark is where the log ends now: count reads the requests after it.
func (l *apiLog) mark() int64 {
	fi, err := os.Stat(l.path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// countOrWarn is count, with a failure printed rather than returned: the other figures of a long
// run are worth more than its request counts.
func (l *apiLog) countOrWarn(mark int64) requestCounts {
	c, err := l.count(mark)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot count the API requests:", err)
	}
	return c
}

// A request is one kind of request a client made: "controller create secrets".
type request struct{ client, verb, resource string }

// requestCounts counts requests by kind.
type requestCounts map[request]int

// auditEvent is what count reads of an audit event.
type auditEvent struct {
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	User      struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
}

// count counts the requests logged after mark.
func (l *apiLog) count(mark int64) (requestCounts, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() < mark {
		return nil, fmt.Errorf("audit log %s is shorter than at the mark: rotated", l.path)
	}
	// The API server may have been writing an event as the mark was taken: that event, whose
	// request completed by then, is the phase before's, and the count starts after its line.
	midLine := false
	if mark > 0 {
		before := make([]byte, 1)
		if _, err := f.ReadAt(before, mark-1); err != nil {
			return nil, err
		}
		midLine = before[0] != '\n'
	}
	if _, err := f.Seek(mark, io.SeekStart); err != nil {
		return nil, err
	}
	out := requestCounts{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	if midLine {
		sc.Scan()
	}
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("audit log: %w", err)
		}
		client := clientOf(ev.UserAgent, ev.User.Username)
		if client == "" || ev.Verb == "watch" || ev.ObjectRef == nil {
			continue
		}
		res := ev.ObjectRef.Resource
		if ev.ObjectRef.Subresource != "" {
			res += "/" + ev.ObjectRef.Subresource
		}
		out[request{client: client, verb: ev.Verb, resource: res}]++
	}
	return out, sc.Err()
}

// clientOf names the client of a request by its user agent and user: "" for the benchmark's own.
func clientOf(agent, user string) string {
	name, _, _ := strings.Cut(agent, "/")
	switch {
	case name == "benchscale":
		return ""
	case strings.HasPrefix(name, "modkind") && strings.HasPrefix(user, "system:serviceaccount:"):
		return "runner"
	case strings.HasPrefix(name, "modkind"):
		// The binary's name, whatever -modkind calls it (modkind, modkind-10k).
		return "controller"
	case strings.Contains(agent, "Terraform") || strings.Contains(agent, "OpenTofu"):
		return "terraform"
	case strings.HasPrefix(name, "kube-controller-manager"):
		return "kube-controller-manager"
	case name == "":
		return "(no user agent)"
	}
	return name
}

// add adds c to the counts.
func (rc requestCounts) add(c requestCounts) {
	for k, v := range c {
		rc[k] += v
	}
}

// writes is how many of the counts are writes.
func (rc requestCounts) writes() int {
	n := 0
	for k, v := range rc {
		if isWrite(k.verb) {
			n += v
		}
	}
	return n
}

// writesBy is how many of the counts are writes of client.
func (rc requestCounts) writesBy(client string) int {
	n := 0
	for k, v := range rc {
		if k.client == client && isWrite(k.verb) {
			n += v
		}
	}
	return n
}

func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// A requestColumn is one phase's counts, labelled, over n instances.
type requestColumn struct {
	label  string
	counts requestCounts
	n      int
}

// printRequests prints, per instance, the requests of each column, writes first: one row per
// client, verb and resource any column has.
func printRequests(w io.Writer, module string, cols []requestColumn) error {
	all := requestCounts{}
	for _, c := range cols {
		all.add(c.counts)
	}
	keys := make([]request, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if isWrite(a.verb) != isWrite(b.verb) {
			return isWrite(a.verb)
		}
		if a.client != b.client {
			return a.client < b.client
		}
		if a.resource != b.resource {
			return a.resource < b.resource
		}
		return a.verb < b.verb
	})
	fmt.Fprintf(w, "\nAPI requests per instance, %s (watches aside):\n\n", module)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	head, rule := "| client\t| verb\t| resource\t|", "|---\t|---\t|---\t|"
	for _, c := range cols {
		head += " " + c.label + "\t|"
		rule += "---\t|"
	}
	fmt.Fprintln(tw, head)
	fmt.Fprintln(tw, rule)
	row := func(client, verb, resource string, get func(requestCounts) int) {
		line := fmt.Sprintf("| %s\t| %s\t| %s\t|", client, verb, resource)
		for _, c := range cols {
			line += " " + perInstance(get(c.counts), c.n) + "\t|"
		}
		fmt.Fprintln(tw, line)
	}
	for _, k := range keys {
		row(k.client, k.verb, k.resource, func(rc requestCounts) int { return rc[k] })
	}
	row("all", "writes", "", requestCounts.writes)
	return tw.Flush()
}

// perInstance is calls per instance, as a table cell.
func perInstance(calls, n int) string { return fmt.Sprintf("%.2f", float64(calls)/float64(n)) }
