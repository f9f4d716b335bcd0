package terraform

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// An update used to be two terraform processes: `plan -json -out`, judged by the guard, then
// `apply` of the saved plan. Raw terraform updates in one, `apply -auto-approve`, and the second
// process doubled the time and CPU of every update. `terraform apply` without -auto-approve is
// the one process that plans, shows the plan and then waits for a person's answer on stdin before
// changing anything: modkind gives that answer. It reads the plan terraform printed, answers
// "yes" only when it can account for every change (the same rules as for plan's JSON stream) and
// terraform's own count of objects to destroy is 0 or the run allows destruction, and otherwise
// answers "no", which leaves everything as it was, and decides on a saved plan as before.
//
// Only the lines terraform itself writes at fixed places are read: the headers of the changes
// ("  # <address> will be created") between "... will perform the following actions:" and the
// "Plan: ..." line, and the outputs below "Changes to Outputs:". Values (whatever a tenant set)
// are printed indented deeper, a multi-line string as an indented heredoc, so no value can
// pose as one of those lines. Whatever is not understood makes the answer "no".

const (
	// askPrompt ends what terraform writes before it reads an answer from stdin.
	askPrompt = "\n  Enter a value: "
	// askQuestion starts the question terraform asks before applying a plan (a prompt without it
	// asks for something else, such as a variable's value, which modkind never answers).
	askQuestion = "Do you want to perform these actions"

	answerYes = "yes\n"
	answerNo  = "no\n"

	// askNoChanges is what terraform says, without asking, when the plan changes nothing.
	askNoChanges = "\nNo changes."
)

var (
	askActionsHeading = regexp.MustCompile(`^(Terraform|OpenTofu) will perform the following actions:$`)
	askPlanLine       = regexp.MustCompile(`^Plan: (?:\d+ to import, )?(\d+) to add, (\d+) to change, (\d+) to destroy(?:, \d+ to forget)?\.$`)
	askOutputLine     = regexp.MustCompile(`^  ([+~-]) ([A-Za-z_][A-Za-z0-9_-]*) *=`)
)

// askedHeaders maps how terraform (and OpenTofu) says what happens to an object to the action
// plan's JSON stream names; longer endings come first, since they end like shorter ones.
var askedHeaders = []struct {
	ending, action, reason string
}{
	{" is tainted, so must be replaced", actionReplace, reasonTainted},
	{" is tainted, so it must be replaced", actionReplace, reasonTainted},
	{" will no longer be managed by Terraform, but will not be destroyed", actionForget, ""},
	{" will be removed from the OpenTofu state but will not be destroyed", actionForget, ""},
	{" must be replaced", actionReplace, ""},
	{" will be created", actionCreate, ""},
	{" will be updated in-place", actionUpdate, ""},
	{" will be destroyed", actionDelete, ""},
	{" will be read during apply", actionRead, ""},
	{" will be imported", actionImport, ""},
}

// parseAsked reads the plan terraform printed before it asked whether to apply it, into what
// plan's JSON stream would have said of it. Lines that look like a change but cannot be read are
// counted as unreadable, and so is a second "Plan:" line, so that summarize never calls such a
// plan complete.
func parseAsked(out string) *planStream {
	ps := &planStream{Outputs: map[string]string{}}
	const (
		before = iota
		actions
		outputs
	)
	section := before
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), maxStreamLine)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case askActionsHeading.MatchString(line):
			section = actions
			continue
		case line == "Changes to Outputs:":
			section = outputs
			continue
		case strings.HasPrefix(line, "Plan: "):
			m := askPlanLine.FindStringSubmatch(line)
			if m == nil || ps.Counts != nil {
				ps.Unreadable++
				continue
			}
			add, _ := strconv.Atoi(m[1])
			change, _ := strconv.Atoi(m[2])
			remove, _ := strconv.Atoi(m[3])
			ps.Counts = &streamCounts{Add: add, Change: change, Remove: remove}
			continue
		case line != "" && line[0] != ' ':
			// Any other line at the left margin ends the section it follows.
			section = before
			continue
		}
		switch section {
		case actions:
			// A header is indented by two spaces, or one when the change has no symbol of its
			// own (forget); "# (" lines say why the change above them happens.
			header, ok := strings.CutPrefix(line, "  # ")
			if !ok {
				header, ok = strings.CutPrefix(line, " # ")
			}
			if !ok || strings.HasPrefix(header, "(") {
				continue
			}
			ps.Changes = append(ps.Changes, askedChange(header))
		case outputs:
			if m := askOutputLine.FindStringSubmatch(line); m != nil {
				ps.Outputs[m[2]] = map[string]string{"+": actionCreate, "~": actionUpdate, "-": actionDelete}[m[1]]
			}
		}
	}
	if sc.Err() != nil {
		ps.Unreadable++
	}
	return ps
}

// askedChange reads one change header: "<address> <what happens>". An ending modkind does not
// know gives an action summarize does not know, which makes the plan incomplete.
func askedChange(header string) streamChange {
	if _, to, ok := strings.Cut(header, " has moved to "); ok && to != "" && !strings.Contains(to, " ") {
		return streamChange{Address: to, Action: actionMove}
	}
	for _, h := range askedHeaders {
		if addr, ok := strings.CutSuffix(header, h.ending); ok && addr != "" {
			return streamChange{Address: addr, Action: h.action, Reason: h.reason}
		}
	}
	return streamChange{Address: header, Action: "unknown"}
}

// askedQuestion reports whether out ends with terraform asking to apply the plan it printed (and
// not with a prompt for anything else).
func askedQuestion(out string) bool {
	if !strings.HasSuffix(out, askPrompt) {
		return false
	}
	i := strings.LastIndex(out, "\n"+askQuestion)
	return i >= 0 && !strings.Contains(out[i+1:], "\nPlan: ")
}

// answer decides what to answer terraform when it asks to apply the plan in out: yes only for a
// plan read completely whose destroy count is 0, or any complete plan when the run allows
// destruction. A tainted object's replacement counts as a destroy here: the saved-plan path,
// which lists what it replaces, decides on it.
func answer(out, inputs string, allowDestructive bool) (approved bool, ps *planStream, s PlanSummary) {
	ps = parseAsked(out)
	s, complete := ps.summarize(inputs)
	if !askedQuestion(out) || !complete {
		return false, ps, s
	}
	return allowDestructive || (s.Destroy == 0 && ps.Counts.Remove == 0), ps, s
}

// askQuiet is how long terraform may print nothing before modkind closes its stdin: a prompt it
// did not recognise then fails instead of waiting for ever. Closing stdin is harmless to a
// terraform that is not asking, since it reads stdin only to ask.
const askQuiet = 2 * time.Minute

// applyAsking runs `terraform apply` without -auto-approve and answers its question with decide's
// verdict on the plan printed before it. asked reports whether terraform asked at all (a plan
// without changes is applied without asking); out is what it printed up to its question, or all
// of its output when it never asked.
func (s *session) applyAsking(ctx context.Context, decide func(out string) bool) (asked, approved bool, out string, err error) {
	c := s.asking
	env := maps.Clone(c.env)
	// What terraform-exec sets for every terraform it starts.
	if _, ok := env["CHECKPOINT_DISABLE"]; !ok {
		env["CHECKPOINT_DISABLE"] = os.Getenv("CHECKPOINT_DISABLE")
	}
	for _, k := range []string{"TF_LOG", "TF_LOG_CORE", "TF_LOG_PATH", "TF_LOG_PROVIDER"} {
		env[k] = ""
	}
	env["TF_IN_AUTOMATION"] = "1"
	delete(env, "TF_WORKSPACE")
	if info := s.providers.reattachInfo(); info != nil {
		raw, err := json.Marshal(info)
		if err != nil {
			return false, false, "", errors.Wrap(err, errNewTF)
		}
		env["TF_REATTACH_PROVIDERS"] = string(raw)
	}
	cmd := exec.CommandContext(ctx, c.exe, "apply", "-no-color", "-input=true", "-lock=true", "-parallelism=10", "-refresh=true")
	cmd.Dir = c.dir
	for _, k := range slices.Sorted(maps.Keys(env)) {
		cmd.Env = append(cmd.Env, k+"="+env[k])
	}
	// As terraform-exec does: a cancelled run interrupts terraform, which stops cleanly.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = time.Minute
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return false, false, "", errors.Wrap(err, errNewTF)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return false, false, "", errors.Wrap(err, errNewTF)
	}
	if err := cmd.Start(); err != nil {
		return false, false, "", errors.Wrap(err, errNewTF)
	}
	var closeOnce sync.Once
	closeStdin := func() { closeOnce.Do(func() { _ = stdin.Close() }) }
	quiet := time.AfterFunc(askQuiet, closeStdin)
	var printed bytes.Buffer
	answered := false
	// What terraform prints once answered goes to the run's log, line by line as it comes; the
	// log's reader keeps no value (runlog.go).
	applying := s.log.writer()
	buf := make([]byte, 32<<10)
	for {
		n, rerr := stdout.Read(buf)
		if n > 0 && answered {
			_, _ = applying.Write(buf[:n])
		}
		if n > 0 && !answered {
			quiet.Reset(askQuiet)
			printed.Write(buf[:n])
			if text := printed.String(); strings.HasSuffix(strings.TrimRight(text, " "), strings.TrimRight(askPrompt, " ")) {
				// Whatever terraform asks, it is answered once; what it prints while it applies
				// (which may echo values) is not kept.
				answered = true
				quiet.Stop()
				s.log.human(text)
				if askedQuestion(text) {
					asked, approved = true, decide(text)
					reply := answerNo
					if approved {
						reply = answerYes
					}
					_, _ = io.WriteString(stdin, reply)
				}
				closeStdin()
			}
		}
		if rerr != nil {
			break
		}
	}
	quiet.Stop()
	closeStdin()
	applying.flush()
	if !answered {
		s.log.human(printed.String())
	}
	if err := cmd.Wait(); err != nil {
		return asked, approved, printed.String(), errors.Errorf("%w\n%s", err, strings.TrimSpace(stderr.String()))
	}
	return asked, approved, printed.String(), nil
}
