package terraform

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"
)

// Rendering a plan's text from the JSON that the guard reads already saves a second `terraform
// show` per plan (one more terraform process, which loads every provider's schema). Values come
// from the plan's own sensitivity marks, not from matching text, so a value the provider or module
// marks sensitive is never rendered at all; values read from Secrets are redacted afterwards too
// (planText), for a module that un-marks them.

const (
	textSensitive = "(sensitive value)"
	textUnknown   = "(known after apply)"
	// noChanges is the text of a plan that changes nothing: no terraform show runs for it.
	noChanges = "No changes. The objects match the configuration.\n"
)

// renderPlan renders a plan for people to read, in the manner of `terraform show <planfile>`:
// each changed object with its changed attributes, the counts of s, and the outputs that change.
func renderPlan(p *tfjson.Plan, s PlanSummary) string {
	var b strings.Builder
	var changed []*tfjson.ResourceChange
	for _, rc := range p.ResourceChanges {
		if rc.Change == nil || rc.Mode == tfjson.DataResourceMode || rc.Change.Actions.NoOp() {
			continue
		}
		changed = append(changed, rc)
	}
	if len(changed) > 0 {
		b.WriteString("Terraform will perform the following actions:\n")
		for _, rc := range changed {
			b.WriteString("\n")
			renderResource(&b, rc)
		}
		fmt.Fprintf(&b, "\nPlan: %d to add, %d to change, %d to destroy.\n", s.Add, s.Change, s.Destroy)
	}
	keys := make([]string, 0, len(p.OutputChanges))
	for k, c := range p.OutputChanges {
		// SensitiveOutputs is modkind's, not the module's.
		if c != nil && !c.Actions.NoOp() && k != SensitiveOutputs {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		b.WriteString("\nChanges to Outputs:\n")
		w := width(keys)
		for _, k := range keys {
			c := p.OutputChanges[k]
			d := differ{before: c.Before, after: c.After, beforeSens: c.BeforeSensitive, afterSens: c.AfterSensitive, unknown: c.AfterUnknown}
			d.attr(&b, "  ", symbolOf(c.Actions), pad(k, w), nil)
		}
	}
	if b.Len() == 0 {
		return noChanges
	}
	return b.String()
}

// renderResource renders one object's change.
func renderResource(b *strings.Builder, rc *tfjson.ResourceChange) {
	c := rc.Change
	a := c.Actions
	what := "will be updated in-place"
	switch {
	case a.Replace() && rc.ActionReason == tfjson.ActionReasonReplaceBecauseTainted:
		what = "is tainted, so must be replaced"
	case a.Replace():
		what = "must be replaced"
	case a.Create():
		what = "will be created"
	case a.Delete():
		what = "will be destroyed"
	case a.Read():
		what = "will be read during apply"
	}
	fmt.Fprintf(b, "  # %s %s\n", rc.Address, what)
	sym := symbolOf(a)
	fmt.Fprintf(b, "%s resource %q %q {\n", padLeft(sym, 3), rc.Type, rc.Name)
	d := differ{before: c.Before, after: c.After, beforeSens: c.BeforeSensitive, afterSens: c.AfterSensitive,
		unknown: c.AfterUnknown, forcing: c.ReplacePaths, whole: a.Create() || a.Delete()}
	d.object(b, "      ", nil, asMap(c.Before), asMap(c.After))
	b.WriteString("    }\n")
}

// symbolOf is the sign terraform puts before a change.
func symbolOf(a tfjson.Actions) string {
	switch {
	case a.DestroyBeforeCreate():
		return "-/+"
	case a.CreateBeforeDestroy():
		return "+/-"
	case a.Create():
		return "+"
	case a.Delete():
		return "-"
	case a.Read():
		return "<="
	}
	return "~"
}

// differ renders the difference between two values of one object, with their sensitivity and
// unknown marks, which are shaped like the values (true for a whole subtree).
type differ struct {
	before, after         any
	beforeSens, afterSens any
	unknown               any
	forcing               []any
	// whole renders every attribute, as for an object created or destroyed.
	whole bool
}

// object renders the attributes of an object at path.
func (d differ) object(b *strings.Builder, indent string, path []any, before, after map[string]any) {
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	for k := range asMap(ValueAt(d.unknown, path)) {
		keys[k] = true
	}
	var shown []string
	hidden := 0
	for k := range keys {
		p := append(append([]any{}, path...), k)
		if !d.whole && !d.changed(p) {
			hidden++
			continue
		}
		if d.whole && before[k] == nil && after[k] == nil && !isTrue(ValueAt(d.unknown, p)) {
			continue // Terraform omits attributes that are null on both sides.
		}
		shown = append(shown, k)
	}
	sort.Strings(shown)
	w := width(shown)
	for _, k := range shown {
		p := append(append([]any{}, path...), k)
		d.attr(b, indent, "", pad(k, w), p)
	}
	if hidden > 0 {
		fmt.Fprintf(b, "%s  # (%d unchanged attributes hidden)\n", indent, hidden)
	}
}

// changed says whether the value at path differs, or becomes unknown.
func (d differ) changed(path []any) bool {
	if isTrue(ValueAt(d.unknown, path)) || isTrue(ValueAt(d.beforeSens, path)) != isTrue(ValueAt(d.afterSens, path)) {
		return true
	}
	return !reflect.DeepEqual(ValueAt(d.before, path), ValueAt(d.after, path))
}

// attr renders the attribute at path (the whole value when path is nil) as one line, or as a
// block of lines for an object or list that is not sensitive as a whole.
func (d differ) attr(b *strings.Builder, indent, sym, name string, path []any) {
	before, after := ValueAt(d.before, path), ValueAt(d.after, path)
	bs, as, unk := isTrue(ValueAt(d.beforeSens, path)), isTrue(ValueAt(d.afterSens, path)), isTrue(ValueAt(d.unknown, path))
	if sym == "" {
		switch {
		case before == nil && (after != nil || unk):
			sym = "+"
		case before != nil && after == nil && !unk:
			sym = "-"
		case d.whole && before == nil:
			sym = "+"
		default:
			sym = "~"
		}
		if d.whole && before != nil && after == nil {
			sym = "-"
		}
	}
	forced := ""
	if path != nil && d.forces(path) {
		forced = " # forces replacement"
	}
	bm, am := asMap(before), asMap(after)
	if !bs && !as && !unk && (bm != nil || am != nil) && (before == nil || bm != nil) && (after == nil || am != nil) && path != nil {
		fmt.Fprintf(b, "%s%s %s = {%s\n", indent, sym, name, forced)
		d.object(b, indent+"    ", path, bm, am)
		fmt.Fprintf(b, "%s  }\n", indent)
		return
	}
	old, cur := leaf(before, ValueAt(d.beforeSens, path), nil), leaf(after, ValueAt(d.afterSens, path), ValueAt(d.unknown, path))
	if unk {
		cur = textUnknown
	}
	line := cur
	switch sym {
	case "-":
		line = old + " -> null"
		if d.whole {
			line = old
		}
	case "~", "-/+", "+/-":
		if (before != nil || bs) && (old != textSensitive || cur != textSensitive) {
			line = old + " -> " + cur
		}
	}
	fmt.Fprintf(b, "%s%s %s = %s%s\n", indent, sym, name, line, forced)
}

// forces says whether Terraform named path, or a path within it, as forcing the replacement.
func (d differ) forces(path []any) bool {
	for _, fp := range d.forcing {
		steps, ok := fp.([]any)
		if !ok || len(steps) < len(path) {
			continue
		}
		if reflect.DeepEqual(normalize(steps[:len(path)]), normalize(path)) {
			return true
		}
	}
	return false
}

// normalize makes list indexes of either origin (JSON numbers, Go ints) compare equal.
func normalize(steps []any) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = fmt.Sprint(s)
	}
	return out
}

// leaf renders a whole value on one line, with each part that sensitive marks as sensitive and
// each part that unknown marks as unknown said in words instead.
func leaf(v, sensitive, unknown any) string {
	if isTrue(sensitive) {
		return textSensitive
	}
	if isTrue(unknown) {
		return textUnknown
	}
	if v == nil {
		return "null"
	}
	raw, err := json.Marshal(mask(mask(v, sensitive, markSensitive), unknown, markUnknown))
	if err != nil {
		return textSensitive // Never shown unmasked.
	}
	s := strings.ReplaceAll(string(raw), quoted(markSensitive), textSensitive)
	return strings.ReplaceAll(s, quoted(markUnknown), textUnknown)
}

func quoted(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}

// Markers for masked parts. A string of the plan that is exactly a marker renders as the words
// for it, which reveals nothing.
const (
	markSensitive = "\u0000sensitive"
	markUnknown   = "\u0000unknown"
)

// mask is a copy of v with each part that marks says true for replaced by with.
func mask(v, marks any, with string) any {
	if isTrue(marks) {
		return with
	}
	switch x := v.(type) {
	case map[string]any:
		m := asMap(marks)
		if m == nil {
			return v
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = mask(e, m[k], with)
		}
		for k, mk := range m {
			if _, ok := x[k]; !ok && isTrue(mk) {
				out[k] = mask(nil, mk, with)
			}
		}
		return out
	case []any:
		l, ok := marks.([]any)
		if !ok {
			return v
		}
		out := make([]any, len(x))
		for i, e := range x {
			var mk any
			if i < len(l) {
				mk = l[i]
			}
			out[i] = mask(e, mk, with)
		}
		return out
	}
	return v
}

// ValueAt is the value at path within v: for the marks, true covers every path beneath.
func ValueAt(v any, path []any) any {
	for _, step := range path {
		switch x := v.(type) {
		case bool:
			return x
		case map[string]any:
			k, ok := step.(string)
			if !ok {
				return nil
			}
			v = x[k]
		case []any:
			i, ok := index(step)
			if !ok || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func index(step any) (int, bool) {
	switch s := step.(type) {
	case int:
		return s, true
	case float64:
		return int(s), true
	}
	return 0, false
}

func isTrue(v any) bool {
	b, ok := v.(bool)
	return ok && b
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func width(keys []string) int {
	w := 0
	for _, k := range keys {
		if len(k) > w {
			w = len(k)
		}
	}
	return w
}

func pad(s string, w int) string     { return s + strings.Repeat(" ", max(0, w-len(s))) }
func padLeft(s string, w int) string { return strings.Repeat(" ", max(0, w-len(s))) + s }
