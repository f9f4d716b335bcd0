package terraform

import (
	"regexp"
	"strings"
)

// What terraform prints of a failed run is written for a terminal: the warnings of its CLI
// configuration first (in every error of a cluster whose configuration file is missing), each
// diagnostic in box-drawing characters, the error after them, hundreds of characters in. A Run
// and the log keep it whole; a condition or an event, which a user reads in a line or two,
// gets it distilled.

// cliConfigHeader is what terraform and OpenTofu print before the diagnostics of their CLI
// configuration.
const cliConfigHeader = "There are some problems with the CLI configuration:"

var (
	// boxRule is the rule above the values of an expression, which says nothing.
	boxRule = regexp.MustCompile(`^\s*├─*\s*$`)
	// boxEdge is the edge that starts each line inside a box, and each line of the values under
	// an expression.
	boxEdge = regexp.MustCompile(`^(\s*)│ ?`)
	// exitStatus is how a failed terraform process's error starts.
	exitStatus = regexp.MustCompile(`:?\s*exit status \d+$`)
	// diagnosticStart starts a diagnostic, at the start of a line: its severity and summary.
	diagnosticStart = regexp.MustCompile(`^(Error|Warning): `)
)

// Distill returns the message of a failed run as a user reads it in a condition or an event:
// its first Error block first, then any other diagnostics, then what failed ("terraform apply
// failed"); without the warnings of terraform's CLI configuration, box-drawing characters or
// the process's exit status. A message without an Error block is returned as it is, less those.
func Distill(msg string) string {
	var (
		context []string
		blocks  [][]string
		cur     []string
		inBox   bool
		// cliSection is set from the header of the CLI configuration's diagnostics to the first
		// line of anything else; dropping is set while the lines are a warning of it.
		cliSection, dropping bool
	)
	flush := func() {
		if len(cur) > 0 && !dropping {
			blocks = append(blocks, cur)
		}
		cur, dropping = nil, false
	}
	for _, l := range strings.Split(msg, "\n") {
		trimmed := strings.TrimSpace(l)
		switch {
		case trimmed == cliConfigHeader:
			flush()
			cliSection = true
			continue
		case trimmed == "╷":
			flush()
			inBox = true
			continue
		case trimmed == "╵":
			flush()
			inBox = false
			continue
		case boxRule.MatchString(l):
			continue
		}
		l = strings.TrimRight(boxEdge.ReplaceAllString(l, "$1"), " ")
		if d := diagnosticStart.FindString(l); d != "" {
			flush()
			// Only warnings are dropped: an error of the CLI configuration is the run's error.
			dropping = d == "Warning: " && (cliSection || strings.Contains(l, "CLI configuration"))
		} else if cliSection && !inBox && cur == nil && strings.TrimSpace(l) != "" {
			cliSection = false
		}
		if len(blocks) == 0 && cur == nil && !dropping && !inBox && diagnosticStart.FindString(l) == "" {
			context = append(context, l)
			continue
		}
		cur = append(cur, l)
	}
	flush()
	var errs, others []string
	for _, b := range blocks {
		text := strings.TrimSpace(strings.Join(b, "\n"))
		switch {
		case text == "":
		case strings.HasPrefix(text, "Error: "):
			errs = append(errs, text)
		default:
			others = append(others, text)
		}
	}
	what := strings.TrimSpace(strings.Join(context, "\n"))
	what = strings.TrimSpace(exitStatus.ReplaceAllString(what, ""))
	parts := append(errs, others...)
	switch {
	case what == "":
	case len(errs) == 0:
		parts = append([]string{what}, parts...)
	default:
		parts = append(parts, "("+what+")")
	}
	return strings.Join(parts, "\n\n")
}
