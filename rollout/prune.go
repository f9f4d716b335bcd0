package rollout

import "sort"

// Prunable returns the names of the revisions to remove: beyond the newest limit of those no one
// uses. inUse are the revisions an instance was last applied with or is pinned to, the newest
// (latest) and those a rollout moves from or to: they are always kept, and do not count against
// the limit.
func Prunable(revs []Revision, inUse map[string]bool, limit int) []string {
	sorted := make([]Revision, len(revs))
	copy(sorted, revs)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Number > sorted[j].Number })
	var out []string
	kept := 0
	for _, r := range sorted {
		if inUse[r.Name] {
			continue
		}
		if kept < limit {
			kept++
			continue
		}
		out = append(out, r.Name)
	}
	sort.Strings(out)
	return out
}
