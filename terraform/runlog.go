package terraform

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// A run's log is what terraform did, object by object, as people read it on a Run (status.log)
// in both runner modes: the commands, each object's progress ("terraform_data.x: Creation
// complete after 0s"), the plan's and the apply's counts, how many outputs there are, and the
// first line of each error. It never holds a value: terraform's own text prints values in plans,
// outputs and diagnostics, and a Run is read by whoever may read its namespace (`view`), who may
// not read the Secrets the values come from. So only the lines terraform writes at fixed places
// are taken, object addresses are redacted as plan summaries are (an instance key may be a
// Secret's key), and resource ids ("[id=…]") are left out.

const (
	// MaxLogLines and MaxLogBytes bound a run's log to its last lines, as a Run's status.log
	// does (its CRD's maxLength), so that a run of thousands of objects keeps its end.
	MaxLogLines = 120
	MaxLogBytes = 8 << 10

	logCut = "… (%d earlier lines not kept)"
)

var (
	// logProgress is a line terraform writes, at the start of a line, as it works on an object:
	// address, then what happens; an id or elapsed time may follow, which is dropped or kept
	// below. Values never start a line: terraform prints them indented (plans) or after
	// "Outputs:", where reading stops.
	logProgress = regexp.MustCompile(`^((?:module\.[A-Za-z0-9_-]+(?:\[[^\]]*\])?\.)*(?:data\.|ephemeral\.)?[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+(?:\[[^\]]*\])?): ` +
		`(Creating\.\.\.|Creation complete after [0-9hms.]+|Modifying\.\.\.|Modifications complete after [0-9hms.]+|` +
		`Destroying\.\.\.|Destruction complete after [0-9hms.]+|Reading\.\.\.|Read complete after [0-9hms.]+|` +
		`Refreshing state\.\.\.|Still (?:creating|modifying|destroying|reading)\.\.\. \[[0-9hms.]+ elapsed\]|` +
		`Opening\.\.\.|Opening complete after [0-9hms.]+|Closing\.\.\.|Closing complete after [0-9hms.]+)(?: \[id=.*\])?$`)
	// logSummary are the lines of counts and outcomes terraform prints at the start of a line.
	logSummary = regexp.MustCompile(`^(Plan: [0-9a-z ,]+\.|Apply complete! Resources: [0-9a-z ,]+\.|Destroy complete! Resources: [0-9a-z ,]+\.|No changes\. .*|Apply cancelled\.)$`)
	// logPlanHeader is the header terraform prints for each change of a plan (asked.go reads the
	// same lines): two spaces, "# ", the address and what happens to it.
	logPlanHeader = regexp.MustCompile(`^  # (.+) (will be [a-z -]+|must be replaced|is tainted, so must be replaced|has moved to .+|will be read during apply)$`)
)

// A RunLog collects one run's log. Its zero value is ready; a nil *RunLog keeps nothing.
type RunLog struct {
	mu      sync.Mutex
	lines   []string
	dropped int
	echo    func(line string)
}

// NewRunLog returns an empty log.
func NewRunLog() *RunLog { return &RunLog{} }

// NewRunLogTo returns an empty log that also gives echo each line as it is added (a runner pod
// prints them, so that its log shows a run's progress), unredacted: echo redacts.
func NewRunLogTo(echo func(line string)) *RunLog { return &RunLog{echo: echo} }

// add keeps line, dropping the oldest when more than MaxLogLines are kept.
func (l *RunLog) add(line string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.echo != nil {
		l.echo(line)
	}
	l.lines = append(l.lines, line)
	if over := len(l.lines) - MaxLogLines; over > 0 {
		l.lines = append(l.lines[:0], l.lines[over:]...)
		l.dropped += over
	}
}

// command starts the part of the log of one terraform command.
func (l *RunLog) command(what string) { l.add("$ terraform " + what) }

// failed notes that the command failed: the Run's message says why, whole and redacted; its
// first line is enough here.
func (l *RunLog) failed(err error) {
	if err == nil {
		return
	}
	first, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
	l.add("Error: " + first)
}

// human takes, of text that terraform printed for people (plan, apply, destroy, refresh without
// -json), the lines at fixed places: each object's progress, the plan's changes by address,
// the counts. It stops at "Outputs:", below which terraform prints the outputs' values.
func (l *RunLog) human(text string) { l.humanUntilOutputs(text) }

// humanUntilOutputs is human, reporting whether text reached "Outputs:".
func (l *RunLog) humanUntilOutputs(text string) (outputs bool) {
	if l == nil {
		return false
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), maxStreamLine)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \r")
		if line == "Outputs:" {
			return true
		}
		if m := logProgress.FindStringSubmatch(line); m != nil {
			l.add(m[1] + ": " + m[2])
			continue
		}
		if m := logPlanHeader.FindStringSubmatch(line); m != nil {
			l.add(m[1] + ": " + m[2])
			continue
		}
		if logSummary.MatchString(line) {
			l.add(line)
		}
	}
	return false
}

// stream takes the log lines of a plan -json or apply -json stream (planStream.Log).
func (l *RunLog) stream(ps *planStream) {
	if l == nil || ps == nil {
		return
	}
	for _, line := range ps.Log {
		l.add(line)
	}
}

// writer is an io.Writer for a command's stdout whose text goes to human once the command ends
// (flush): terraform writes a line in pieces, and only whole lines can be read.
func (l *RunLog) writer() *logWriter { return &logWriter{log: l} }

type logWriter struct {
	log *RunLog
	buf bytes.Buffer
	// outputs says terraform has begun printing the outputs' values: nothing more is read.
	outputs bool
}

func (w *logWriter) Write(p []byte) (int, error) {
	if w.outputs {
		return len(p), nil
	}
	// A plan of thousands of objects prints megabytes; only whole lines are read, as they come.
	w.buf.Write(p)
	if i := bytes.LastIndexByte(w.buf.Bytes(), '\n'); i >= 0 {
		w.outputs = w.log.humanUntilOutputs(string(w.buf.Next(i + 1)))
		if w.outputs {
			w.buf.Reset()
		}
	}
	return len(p), nil
}

// flush reads what is left of the command's output.
func (w *logWriter) flush() {
	if w.buf.Len() > 0 && !w.outputs {
		w.log.human(w.buf.String())
	}
	w.buf.Reset()
}

// Text is the log as a Run shows it: the lines kept, each redacted, within MaxLogBytes (the
// newest kept), "" for none.
func (l *RunLog) Text(red *Redactor) string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	dropped := l.dropped
	var kept []string
	size := 0
	for i := len(l.lines) - 1; i >= 0; i-- {
		line := red.Redact(l.lines[i])
		if len(line) > MaxLogBytes/4 {
			line = cutLine(line, MaxLogBytes/4)
		}
		if size+len(line)+1 > MaxLogBytes-64 {
			dropped += i + 1
			break
		}
		size += len(line) + 1
		kept = append(kept, line)
	}
	var b strings.Builder
	if dropped > 0 {
		fmt.Fprintf(&b, logCut+"\n", dropped)
	}
	for i := len(kept) - 1; i >= 0; i-- {
		b.WriteString(kept[i])
		b.WriteByte('\n')
	}
	return b.String()
}

// cutLine cuts s to at most n bytes on a character's boundary.
func cutLine(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
