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
	// diagnosticStart starts a diagnostic: its severity and summary.
	diagnosticStart = regexp.MustCompile(`^(Error|Warning): `)
)

// Distill returns the message of a failed run as a user reads it in a condition or an event:
// its first Error block first, then any other diagnostics, then what failed ("terraform apply
// failed"); without the warnings of terraform's CLI configuration, box-drawing characters or
// the process's exit status. A message without an Error block is returned as it is, less those.
func Distill(msg string) string {
	lines := strings.Split(msg, "\n")
	var (
		context []string
		blocks  [][]string
		cur     []string
		inBox   bool
		// skipping is set while the lines are a CLI configuration diagnostic.
		skipping bool
	)
	flush := func() {
		if len(cur) > 0 && !skipping {
			blocks = append(blocks, cur)
		}
		cur = nil
	}
	for _, l := range lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case trimmed == cliConfigHeader:
			flush()
			skipping = true
			continue
		case trimmed == "╷":
			flush()
			inBox = true
			continue
		case trimmed == "╵":
			flush()
			inBox, skipping = false, false
			continue
		case boxRule.MatchString(l):
			continue
		}
		l = strings.TrimRight(boxEdge.ReplaceAllString(l, "$1"), " ")
		if d := diagnosticStart.FindString(strings.TrimSpace(l)); d != "" && strings.HasPrefix(l, d) {
			flush()
			// A CLI configuration diagnostic in a box ends with its box; one without ends here.
			skipping = skipping && inBox
			if strings.Contains(l, "CLI configuration") {
				skipping = true
			}
		}
		if len(blocks) == 0 && cur == nil && !skipping && !inBox && !diagnosticStart.MatchString(l) {
			context = append(context, l)
			continue
		}
		if skipping {
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
