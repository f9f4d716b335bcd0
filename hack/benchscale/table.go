package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// result is one side's figures for one module.
type result struct {
	createWall, createCPU time.Duration
	createCalls           int
	updateWall, updateCPU time.Duration
	updateCalls           int
	// createProviders and updateProviders are the things provider processes started.
	createProviders, updateProviders int
	// createOwn and updateOwn are the CPU of the controller's own process, without terraform's.
	createOwn, updateOwn time.Duration
	// createAPI and updateAPI are the CPU of the API server and etcd meanwhile: the load the
	// side's calls put on them, which shares the machine's cores with terraform.
	createAPI, updateAPI time.Duration
	// updatePatches is the CPU of the API server and etcd for the update's patches alone,
	// measured on twins no controller watches (patches.go); none for the floor.
	updatePatches time.Duration
	// createRequests and updateRequests are the API requests of the side's clients meanwhile.
	createRequests, updateRequests requestCounts
	// createFetched and updateFetched are the bytes the runners fetched from the controller.
	createFetched, updateFetched fetchedBytes
	// createAtOnce and updateAtOnce are the most runs seen going at once.
	createAtOnce, updateAtOnce int
	idleCPU                    time.Duration
	idleCalls                  int
	peakRSS                    int64 // KiB
	// restart is what a restart of the controller cost, with -restart.
	restart restartFigures
	// ctrlInits is how many terraform inits the controller ran: its provider installations.
	ctrlInits int

	// job says the figures are of --runner job, with the runner pods' figures below: their CPU
	// (the test node's children) and terraform calls, and what their inits installed.
	job                                             bool
	createRunnerCPU, updateRunnerCPU, idleRunnerCPU time.Duration
	createRunnerCalls, updateRunnerCalls            int
	idleRunnerCalls                                 int
	check                                           providerCheck
	// stuck is the stuck tenant's state at the column's end: nil without one.
	stuck *stuckState
}

// table measures each module of -modules, on the floor and on each side, and prints the figures
// as a table: a row per measure, with a column for the floor and, for each side, a column and one
// of its ratio to the floor.
func (b *bench) table(ctx context.Context, tf string, sides []side) error {
	fmt.Printf("N=%d, %d runs at once, idle window %s, modkind --drift-interval %s, %s", b.o.n, b.o.parallel, b.o.idle, b.o.drift, tf)
	if b.o.stuck > 0 {
		fmt.Printf("; job columns beside a stuck tenant of %d instances (cause %s)", b.o.stuck, b.o.stuckCause)
	}
	if b.o.modkindArgs != "" {
		fmt.Printf("; modkind %s", b.o.modkindArgs)
	}
	fmt.Print("\n\n")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 1, ' ', 0)
	head := fmt.Sprintf("| module\t| measure\t| floor (raw %s)\t|", b.tfName)
	rule := "|---\t|---\t|---\t|"
	for _, sd := range sides {
		head += " " + sd.label + "\t| ratio\t|"
		rule += "---\t|---\t|"
	}
	fmt.Fprintln(tw, head)
	fmt.Fprintln(tw, rule)
	var requests []func() error
	for _, name := range strings.Split(b.o.modules, ",") {
		m, ok := modules[name]
		if !ok {
			return fmt.Errorf("no module %q: there are %s", name, moduleNames)
		}
		floor, results, err := b.measure(ctx, name, m, sides)
		if err != nil {
			return err
		}
		rows := moduleRows{tw: tw, o: b.o, module: name, floor: floor, results: results}
		rows.create()
		rows.update()
		rows.idle()
		rows.footprint()
		rows.restart()
		rows.stuck()
		requests = append(requests, func() error { return printRequests(os.Stdout, name, b.requestColumns(sides, floor, results)) })
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, print := range requests {
		if err := print(); err != nil {
			return err
		}
	}
	return nil
}

// requestColumns are the API requests of each phase of the floor, if measured, and of each side.
func (b *bench) requestColumns(sides []side, floor result, results []result) []requestColumn {
	var cols []requestColumn
	add := func(label string, r result) {
		cols = append(cols, requestColumn{label + " create", r.createRequests, b.o.n})
		if b.o.update {
			cols = append(cols, requestColumn{label + " update", r.updateRequests, b.o.n})
		}
	}
	if b.o.floor {
		add("floor", floor)
	}
	for i, r := range results {
		add(sides[i].label, r)
	}
	return cols
}

// moduleRows prints the rows of one module's measures: the floor's figure, then for each side its
// figure and, where it has one, its ratio to the floor's.
type moduleRows struct {
	tw      *tabwriter.Writer
	o       options
	module  string
	floor   result
	results []result
}

// A cell is a side's figure in a row, and its ratio to the floor's ("" for none).
type cell func(r result) (figure, ratio string)

// row prints the row of measure what: f is the floor's figure, "-" when the floor has none, and
// c the sides'.
func (t moduleRows) row(what, f string, c cell) {
	if !t.o.floor && f != "-" {
		f = "not run"
	}
	line := fmt.Sprintf("| %s\t| %s\t| %s\t|", t.module, what, f)
	for _, r := range t.results {
		v, ratio := c(r)
		line += fmt.Sprintf(" %s\t| %s\t|", v, ratio)
	}
	fmt.Fprintln(t.tw, line)
}

// timeCell is a cell of a time, with its ratio to the floor's time f.
func timeCell(f time.Duration, get func(r result) time.Duration) cell {
	return func(r result) (string, string) { return secs(get(r)), ratio(get(r), f) }
}

// callsCell is a cell of terraform calls per instance, of n instances.
func callsCell(n int, get func(r result) int) cell {
	return func(r result) (string, string) { return perInstance(get(r), n), "" }
}

// jobOnly shows a figure of job mode, and "-" in a process column.
func jobOnly(get func(r result) string) cell {
	return func(r result) (string, string) {
		if !r.job {
			return "-", ""
		}
		return get(r), ""
	}
}

// create prints the rows of the create phase.
func (t moduleRows) create() {
	f, n := t.floor, t.o.n
	t.row("create → all Ready, wall s", secs(f.createWall), timeCell(f.createWall, func(r result) time.Duration { return r.createWall }))
	t.row("create, most Runs Running at once (sampled)", "-", jobOnly(func(r result) string { return strconv.Itoa(r.createAtOnce) }))
	t.row("create, controller CPU-s (with its children)", secs(f.createCPU), timeCell(f.createCPU, func(r result) time.Duration { return r.createCPU }))
	t.row("create, controller's own CPU-s", "-", func(r result) (string, string) { return secs(r.createOwn), "" })
	t.row("create, runner pods CPU-s", "-", jobOnly(func(r result) string { return secs(r.createRunnerCPU) }))
	t.row("create, controller + runners CPU-s", secs(f.createCPU), timeCell(f.createCPU, func(r result) time.Duration { return r.createCPU + r.createRunnerCPU }))
	t.row("create, API server + etcd CPU-s", secs(f.createAPI), timeCell(f.createAPI, func(r result) time.Duration { return r.createAPI }))
	t.row("create, terraform calls/instance (controller)", perInstance(f.createCalls, n), callsCell(n, func(r result) int { return r.createCalls }))
	t.row("create, terraform calls/instance (runners)", "-", jobOnly(func(r result) string { return perInstance(r.createRunnerCalls, n) }))
	t.row("create, fetched per instance by runners (bundle / providers)", "-", jobOnly(func(r result) string { return r.createFetched.perRun(n) }))
	t.row("create, things provider processes started", t.providers(f.createProviders), t.providersCell(func(r result) int { return r.createProviders }))
}

// update prints the rows of the update phase.
func (t moduleRows) update() {
	if !t.o.update {
		return
	}
	f, n := t.floor, t.o.n
	t.row("update all → applied, wall s", secs(f.updateWall), timeCell(f.updateWall, func(r result) time.Duration { return r.updateWall }))
	t.row("update, most Runs Running at once (sampled)", "-", jobOnly(func(r result) string { return strconv.Itoa(r.updateAtOnce) }))
	t.row("update, controller CPU-s (with its children)", secs(f.updateCPU), timeCell(f.updateCPU, func(r result) time.Duration { return r.updateCPU }))
	t.row("update, controller's own CPU-s", "-", func(r result) (string, string) { return secs(r.updateOwn), "" })
	t.row("update, runner pods CPU-s", "-", jobOnly(func(r result) string { return secs(r.updateRunnerCPU) }))
	t.row("update, controller + runners CPU-s", secs(f.updateCPU), timeCell(f.updateCPU, func(r result) time.Duration { return r.updateCPU + r.updateRunnerCPU }))
	t.row("update, API server + etcd CPU-s", secs(f.updateAPI), timeCell(f.updateAPI, func(r result) time.Duration { return r.updateAPI }))
	t.row("update, the benchmark's patches alone (twins), API server + etcd CPU-s", "-", func(r result) (string, string) { return secs(r.updatePatches), "" })
	t.row("update, API server + etcd CPU-s less those patches", secs(f.updateAPI), timeCell(f.updateAPI, func(r result) time.Duration { return r.updateAPI - r.updatePatches }))
	t.row("update, terraform calls/instance (controller)", perInstance(f.updateCalls, n), callsCell(n, func(r result) int { return r.updateCalls }))
	t.row("update, terraform calls/instance (runners)", "-", jobOnly(func(r result) string { return perInstance(r.updateRunnerCalls, n) }))
	t.row("update, fetched per instance by runners (bundle / providers)", "-", jobOnly(func(r result) string { return r.updateFetched.perRun(n) }))
	t.row("update, things provider processes started", t.providers(f.updateProviders), t.providersCell(func(r result) int { return r.updateProviders }))
}

// providers is a count of things provider processes started, "-" for a module without that
// provider.
func (t moduleRows) providers(n int) string {
	if t.module == "terraform_data" {
		return "-"
	}
	return strconv.Itoa(n)
}

// providersCell is a cell of things provider processes started.
func (t moduleRows) providersCell(get func(r result) int) cell {
	return func(r result) (string, string) { return t.providers(get(r)), "" }
}

// idle prints the rows of the idle window, where the floor, which runs nothing, has zeros.
func (t moduleRows) idle() {
	t.row("idle, CPU % of one core (controller + runners)", "0", func(r result) (string, string) {
		return fmt.Sprintf("%.2f", 100*(r.idleCPU+r.idleRunnerCPU).Seconds()/t.o.idle.Seconds()), ""
	})
	t.row("idle, terraform processes", "0", func(r result) (string, string) { return strconv.Itoa(r.idleCalls + r.idleRunnerCalls), "" })
}

// footprint prints the rows of what the controller held and installed, and of where the runners
// got their providers from: figures the floor has none of.
func (t moduleRows) footprint() {
	t.row("controller peak RSS, MiB", "-", func(r result) (string, string) { return fmt.Sprintf("%.0f", float64(r.peakRSS)/1024), "" })
	t.row("controller terraform inits", "-", func(r result) (string, string) { return strconv.Itoa(r.ctrlInits), "" })
	t.row("runner inits / providers they installed", "-", jobOnly(func(r result) string {
		return fmt.Sprintf("%d / %d", r.check.inits, r.check.installed)
	}))
	t.row("runner inits that could or did get a provider elsewhere", "-", jobOnly(func(r result) string {
		return strconv.Itoa(r.check.outside)
	}))
}

// restart prints the rows of a restart of the controller, with -restart.
func (t moduleRows) restart() {
	if !t.o.restart {
		return
	}
	t.row("restart → every instance observed, s", "-", func(r result) (string, string) { return secs(r.restart.settle), "" })
	t.row("restart, terraform calls until then", "-", func(r result) (string, string) { return strconv.Itoa(r.restart.calls), "" })
	t.row("restart, controller's API writes until then", "-", func(r result) (string, string) {
		return strconv.Itoa(r.restart.requests.writesBy("controller")), ""
	})
	t.row("restart, controller CPU-s until then", "-", func(r result) (string, string) { return secs(r.restart.cpu), "" })
	t.row("restart, controller peak RSS until then, MiB", "-", func(r result) (string, string) {
		return fmt.Sprintf("%.0f", float64(r.restart.rss)/1024), ""
	})
}

// stuck prints the rows of the stuck tenant's state, when there is one: the proof that it was
// stuck while the column was measured.
func (t moduleRows) stuck() {
	if t.o.stuck == 0 {
		return
	}
	cell := func(f func(st *stuckState) string) cell {
		return jobOnly(func(r result) string {
			if r.stuck == nil {
				return "-"
			}
			return f(r.stuck)
		})
	}
	t.row(fmt.Sprintf("stuck tenant (%s): its Runs holding slots as the create began", t.o.stuckCause), "-", cell(func(st *stuckState) string { return strconv.Itoa(st.held) }))
	t.row("stuck tenant: instances Ready at the end", "-", cell(func(st *stuckState) string { return fmt.Sprintf("%d of %d", st.ready, st.instances) }))
	t.row("stuck tenant: instances with a Pending Run (holding a slot) at the end", "-", cell(func(st *stuckState) string { return fmt.Sprintf("%d of %d", st.pending, st.instances) }))
	t.row("stuck tenant: Synced=False naming the cause at the end", "-", cell(func(st *stuckState) string { return fmt.Sprintf("%d of %d", st.named, st.instances) }))
	t.row("stuck tenant: Synced=False waiting for a run slot at the end", "-", cell(func(st *stuckState) string { return fmt.Sprintf("%d of %d", st.waiting, st.instances) }))
	t.row("stuck tenant: Runs failed by the start timeout, in the create / in all", "-", cell(func(st *stuckState) string {
		return fmt.Sprintf("%d / %d", st.duringCreate, st.timedOut)
	}))
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", a.Seconds()/b.Seconds())
}
