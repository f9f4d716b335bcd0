package slots

// Load is what the runs of each namespace hold and await when a run asks to start: the whole of
// what the decision to let it (MayStart) reads.
type Load struct {
	// Running counts, per namespace, the runs that hold a slot.
	Running map[string]int
	// Waiting counts, per namespace, the runs that want a slot and do not hold one: waiting in
	// line, admitted and preparing, or (job mode) Queued.
	Waiting map[string]int
}

// MayStart returns nil when a run of namespace may take a slot now, given load, or the error that
// says what it waits for: a *ShareFullError or a *FullError.
//
// Shares are work-conserving. Within its share a namespace's run starts whenever a slot is free.
// Beyond its share it starts too while a slot is free that no other namespace claims: a slot
// another namespace's waiting run would take within that namespace's own share. So a namespace
// alone uses every slot, and once another waits, each slot that frees goes to it until it holds
// its share; running terraform is never stopped for it (no preemption). A share a cluster admin
// set on the Namespace (AnnotationMaxRuns) is a cap: nothing is lent beyond it, and 0 stops the
// namespace's runs.
func (p Policy) MayStart(namespace string, load Load) error {
	return mayStart(namespace, max(p.Total, 1), p.shareAndCap, load)
}

// mayStart is MayStart with the shares read by share: the Pool reads them from what it cached,
// never calling Override while it holds its lock.
func mayStart(namespace string, total int, share func(string) (int, bool), load Load) error {
	running := 0
	for _, n := range load.Running {
		running += n
	}
	own, capped := share(namespace)
	if load.Running[namespace] < own {
		if running >= total {
			return &FullError{Active: running, Max: total}
		}
		return nil
	}
	if !capped && own > 0 && total-running > claimed(namespace, share, load) {
		return nil
	}
	// A namespace whose share is every slot is lent none: a count above it is a Run the load
	// shows twice as it starts (reserved, and seen started), and the message stays the same.
	return &ShareFullError{Namespace: namespace, Active: min(load.Running[namespace], own), Share: own,
		Lent: load.Running[namespace] > own && own < total}
}

// claimed counts the slots the waiting runs of namespaces other than namespace would take within
// their shares: slots that are not idle, though free.
func claimed(namespace string, share func(string) (int, bool), load Load) int {
	n := 0
	for ns, wanting := range load.Waiting {
		if ns == namespace || wanting <= 0 {
			continue
		}
		s, _ := share(ns)
		n += min(wanting, max(s-load.Running[ns], 0))
	}
	return n
}
