package terraform

import (
	"sort"
	"strings"
)

// MaxMessage bounds what a condition or event carries of a terraform error; the rest is in the
// controller's log-free past on purpose: terraform output can echo values.
const MaxMessage = 2000

// Redactor removes known secret values from messages before they reach a condition or event.
type Redactor struct{ secrets []string }

// NewRedactor redacts the given values; values shorter than four characters are ignored, since
// replacing them would mangle ordinary words.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if len(s) >= 4 {
			r.secrets = append(r.secrets, s)
		}
	}
	// Longest first, so that a secret containing another is removed whole.
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	return r
}

// Redact returns msg with every secret replaced and its length bounded.
func (r *Redactor) Redact(msg string) string {
	for _, s := range r.secrets {
		msg = strings.ReplaceAll(msg, s, "(redacted)")
	}
	if len(msg) > MaxMessage {
		msg = msg[:MaxMessage] + "…"
	}
	return msg
}

// Values are the values r redacts, to hand to a runner that reports for the same run.
func (r *Redactor) Values() []string { return r.secrets }

// Error wraps err so that its message is redacted.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	return redactedError{msg: r.Redact(err.Error())}
}

type redactedError struct{ msg string }

func (e redactedError) Error() string { return e.msg }
