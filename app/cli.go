package app

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/modkind/modkind/apis/v1alpha1"
	"github.com/modkind/modkind/crd"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/kind/fields"
	"github.com/modkind/modkind/module"
	"github.com/modkind/modkind/printable"
	"github.com/modkind/modkind/terraform"
)

// command is one of modkind's subcommands.
type command struct {
	// summary is the command's line in modkind's usage.
	summary string
	run     func(args []string, out io.Writer) error
}

// commands are modkind's subcommands: offline ones for reviewing in GitOps what a cluster would
// get, and plan and approve for an instance's plans in a cluster. They are set in init because
// each command's usage reads its summary from them.
var commands map[string]command

func init() {
	commands = map[string]command{
		"approve":  {summary: "approve the plan that waits for an instance in approval mode", run: approve},
		"generate": {summary: "print the CRD that a Module with the given source would install", run: generate},
		"plan":     {summary: "print the last plan of an instance, as terraform shows it", run: plan},
		"render":   {summary: "print the root module and tfvars modkind would run for an instance", run: render},
		"rollout":  {summary: "show, preview, promote, pause, resume or undo the rollout of a Module's new revision", run: rolloutCommand},
		"runner":   {summary: "execute one Run, as the Job the controller made for it does (--runner job)", run: runner},
		"state":    {summary: "show, accept (sign) an instance's state, or rotate the state signing keys, as a cluster admin", run: stateCommand},
		"version":  {summary: "print modkind's version", run: version},
	}
}

// usageError is a command line that cannot run, or flag.ErrHelp for a request for help: main
// prints usage with it, on stderr and with exit code 2 for an error, on stdout for help.
type usageError struct {
	err   error
	usage func(w io.Writer)
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// flagSet is a FlagSet that prints nothing itself: its parse errors and help requests come back
// as usageErrors.
// ControllerFlags is the FlagSet of the controller (modkind with no command), as its help prints
// it: for the flags table of docs/flags.md.
func ControllerFlags() *flag.FlagSet {
	fs, _ := controllerFlags()
	return fs.FlagSet
}

type flagSet struct {
	*flag.FlagSet
	usage func(w io.Writer)
}

// newFlagSet returns a flagSet whose usage is the given function.
func newFlagSet(name string, usage func(fs *flag.FlagSet, w io.Writer)) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, usage: func(w io.Writer) { usage(fs, w) }}
}

// newCommandFlags returns the flagSet of a subcommand run as synopsis.
func newCommandFlags(name, synopsis string) *flagSet {
	return newFlagSet(name, func(fs *flag.FlagSet, w io.Writer) {
		fmt.Fprintf(w, "Usage: %s\n\n%s\n", synopsis, commands[name].summary)
		if hasFlags(fs) {
			fmt.Fprintln(w, "\nFlags:")
			printDefaults(fs, w)
		}
	})
}

func (f *flagSet) parse(args []string) error {
	if err := f.Parse(args); err != nil {
		return &usageError{err: err, usage: f.usage}
	}
	return nil
}

// fail returns a usageError with the given message.
func (f *flagSet) fail(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...), usage: f.usage}
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// printDefaults prints the flags of fs to w.
func printDefaults(fs *flag.FlagSet, w io.Writer) {
	prev := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(prev)
}

// modkindUsage prints modkind's usage with the controller's flags as they are by default.
func modkindUsage(w io.Writer) {
	fs, _ := controllerFlags()
	fs.usage(w)
}

// mainUsage prints modkind's usage: its commands, and the controller's flags from fs.
func mainUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, `modkind turns Terraform modules into Kubernetes kinds.

Usage:
  modkind [flags]              run the controller; without a cluster, in a local control plane
  modkind <command> [flags]    run a command
  modkind help [<command>]     print this help, or a command's

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nModes modkind starts itself in (never started by hand):")
	for _, m := range earlyModes {
		fmt.Fprintf(w, "  %s (%s set): %s\n", m.name, m.env, m.what)
	}
	fmt.Fprintln(w, "\nController flags:")
	printDefaults(fs, w)
}

// help answers `modkind help [<command>]`: its usage goes to stdout as a request for help.
func help(args []string) error {
	switch {
	case len(args) == 0:
		return &usageError{err: flag.ErrHelp, usage: modkindUsage}
	case len(args) > 1:
		return &usageError{err: fmt.Errorf("help takes one command, got %q", args), usage: modkindUsage}
	case args[0] == "help" || args[0] == "-h" || args[0] == "-help" || args[0] == "--help":
		return help(nil)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return &usageError{err: fmt.Errorf("unknown command %q", args[0]), usage: modkindUsage}
	}
	// Every command answers --help with its usage before doing anything.
	return cmd.run([]string{"--help"}, io.Discard)
}

// diagnostics receives the offline commands' progress and warnings, apart from their output.
var diagnostics io.Writer = os.Stderr

// fetchModule fetches and inspects a module source (a path or a Terraform source address) into
// a cache directory, as the controller would.
func fetchModule(ctx context.Context, source, ver, cacheDir string) (*module.Module, error) {
	src := module.Source{URL: source, Version: ver}
	if fi, err := os.Stat(source); err == nil && fi.IsDir() {
		abs, err := filepath.Abs(source)
		if err != nil {
			return nil, err
		}
		src = module.Source{Path: abs}
	}
	fmt.Fprintf(diagnostics, "fetching %s…\n", src)
	r, err := (&module.CacheFetcher{Dir: cacheDir}).FetchSource(ctx, src)
	if err != nil {
		return nil, err
	}
	m, err := module.Inspect(r.Dir)
	if err != nil {
		return nil, err
	}
	m.Digest = r.Digest
	return m, nil
}

func defaultCacheDir() string { return filepath.Join(defaultWorkDir(), "modules") }

// generate prints the CRD that a Module with the given source and names would install.
func generate(args []string, out io.Writer) error {
	fs := newCommandFlags("generate", "modkind generate --source <path|url> --group <group> --kind <Kind> [flags]")
	source := fs.String("source", "", "module source: a directory, or an address as in a Terraform module block")
	ver := fs.String("version", "", "version constraint, for a registry source")
	group := fs.String("group", "", "API group of the kind")
	kind := fs.String("kind", "", "kind")
	name := fs.String("module-name", "", "name of the Module (labels the CRD); the lower-cased kind when empty")
	cache := fs.String("cache-dir", defaultCacheDir(), "where fetched modules are kept")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *source == "" || *group == "" || *kind == "" {
		return fs.fail("--source, --group and --kind are required")
	}
	if fs.NArg() > 0 {
		return fs.fail("unexpected argument %q", fs.Arg(0))
	}
	m, err := fetchModule(context.Background(), *source, *ver, *cache)
	if err != nil {
		return err
	}
	if *name == "" {
		*name = strings.ToLower(*kind)
	}
	c, err := crd.Synthesize(*name, v1alpha1.CRDNames{Group: *group, Kind: *kind}, m)
	if err != nil {
		return err
	}
	for _, f := range crd.YAMLAmbiguousFields(c) {
		fmt.Fprintln(diagnostics, "warning:", crd.YAMLKeyWarning(f))
	}
	if r := crd.Validations(m); len(r.Blocks) > 0 {
		fmt.Fprintln(diagnostics, r.Header()+":")
		for _, l := range r.Lines() {
			fmt.Fprintln(diagnostics, "  "+l)
		}
	}
	// Status is the API server's to fill; a CRD for review carries none.
	c.Status = extv1.CustomResourceDefinitionStatus{}
	b, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// render prints the root module and tfvars modkind would run for an instance, with the values
// of sensitive variables redacted.
func render(args []string, out io.Writer) error {
	fs := newCommandFlags("render", "modkind render --source <path|url> [flags] <instance.yaml>")
	source := fs.String("source", "", "module source of the instance's kind: a directory or a Terraform source address")
	ver := fs.String("version", "", "version constraint, for a registry source")
	cache := fs.String("cache-dir", defaultCacheDir(), "where fetched modules are kept")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *source == "" || fs.NArg() != 1 {
		return fs.fail("--source and one instance file are required")
	}
	raw, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	inst := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &inst.Object); err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	m, err := fetchModule(context.Background(), *source, *ver, *cache)
	if err != nil {
		return err
	}
	forProvider, _, _ := unstructured.NestedMap(inst.Object, "spec", fields.ForProvider)
	redacted := map[string]any{}
	for _, v := range m.Variables {
		if v.Sensitive {
			redacted[v.Name] = "(redacted: from a Secret)"
		}
	}
	in := terraform.Inputs{ForProvider: forProvider, SecretValues: redacted}
	if m.Resource == nil {
		// The module's path within its package, as the controller calls it below a run's link.
		if _, in.ModulePath, err = module.PackageOf(*cache, m.Dir); err != nil {
			return err
		}
	}
	root, err := terraform.Render(m, in)
	if err != nil {
		return err
	}
	var mainJSON, vars any
	_ = json.Unmarshal(root.Main, &mainJSON)
	_ = json.Unmarshal(root.Vars, &vars)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(map[string]any{terraform.FileMain: mainJSON, terraform.FileVars: vars})
}

// version prints modkind's version, from the build information Go records.
func version(args []string, out io.Writer) error {
	fs := newCommandFlags("version", "modkind version")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fs.fail("unexpected argument %q", fs.Arg(0))
	}
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	_, err := fmt.Fprintln(out, "modkind", v)
	return err
}

// clusterFlags are the flags of the commands that read an instance in a cluster.
type clusterFlags struct {
	kubeconfig, namespace string
}

func (c *clusterFlags) register(fs *flagSet) {
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster; else KUBECONFIG, ~/.kube/config or the in-cluster config")
	fs.StringVar(&c.namespace, "namespace", "", "namespace of the instance; the kubeconfig context's when empty")
	fs.StringVar(&c.namespace, "n", "", "short for --namespace")
}

// instanceRef is an instance named on the command line as <kind>/<name>, resolved in a cluster.
type instanceRef struct {
	gvk    schema.GroupVersionKind
	key    types.NamespacedName
	client client.Client
}

// resolve connects to the cluster and finds the kind of arg (<kind>/<name>, the kind as a
// resource name such as traces or traces.example.org, or as Kind.group) through discovery.
func (c *clusterFlags) resolve(fs *flagSet, arg string) (*instanceRef, error) {
	kindArg, name, ok := strings.Cut(arg, "/")
	if !ok || kindArg == "" || name == "" || strings.Contains(name, "/") {
		return nil, fs.fail("want <kind>/<name>, such as traces.example.org/web, got %q", arg)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = c.kubeconfig
	overrides := &clientcmd.ConfigOverrides{}
	overrides.Context.Namespace = c.namespace
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, err
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)), dc, nil)
	gvk, err := kind.ResolveKind(mapper, kindArg)
	if err != nil {
		return nil, err
	}
	cl, err := client.New(cfg, client.Options{Mapper: mapper})
	if err != nil {
		return nil, err
	}
	return &instanceRef{gvk: gvk, key: types.NamespacedName{Namespace: ns, Name: name}, client: cl}, nil
}

func (r *instanceRef) String() string {
	return fmt.Sprintf("%s %s/%s", r.gvk.GroupKind(), r.key.Namespace, r.key.Name)
}

// parseInterspersed parses args allowing flags after positional arguments, as kubectl does, and
// returns the positional ones.
func parseInterspersed(fs *flagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// plan prints an instance's last plan: the text of terraform show, with the values modkind read
// from Secrets redacted, from the Secret modkind keeps it in.
func plan(args []string, out io.Writer) error {
	fs := newCommandFlags("plan", "modkind plan <kind>/<name> [-n namespace] [--kubeconfig file]")
	var cf clusterFlags
	cf.register(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fs.fail("want one instance as <kind>/<name>, got %d arguments", len(pos))
	}
	ref, err := cf.resolve(fs, pos[0])
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	view, err := kind.ReadPlanView(ctx, ref.client, ref.gvk.GroupKind().String(), ref.key.Namespace, ref.key.Name)
	if err != nil {
		return err
	}
	inst := &unstructured.Unstructured{}
	inst.SetGroupVersionKind(ref.gvk)
	if err := ref.client.Get(ctx, ref.key, inst); err != nil {
		return err
	}
	// The plan Secret lives in the instance's namespace, where its tenants may write it (and in
	// job mode their runner writes it): its id, counts and text are printed escaped, so that no
	// control character or escape sequence in them acts on the reader's terminal.
	if view.ID == "" {
		fmt.Fprintf(out, "The last plan of %s, made %s, changes nothing.\n\n", ref, view.Time)
	} else {
		id := printable.Line(view.ID)
		fmt.Fprintf(out, "Plan %s of %s (%s), made %s.\n", id, ref, printable.Line(view.Summary), view.Time)
		if kind.WaitingPlan(inst) == view.ID {
			fmt.Fprintf(out, "It waits for approval: modkind approve %s -n %s --plan %s\n", pos[0], ref.key.Namespace, id)
		}
		fmt.Fprintln(out)
	}
	// terraform show starts with an empty line; the header above already separates it.
	_, err = io.WriteString(out, printable.Text(strings.TrimLeft(view.Text, "\n")))
	return err
}

// approve approves the plan that waits for an instance in approval mode: the one plan shows.
func approve(args []string, out io.Writer) error {
	fs := newCommandFlags("approve", "modkind approve <kind>/<name> [-n namespace] [--plan id] [--kubeconfig file]")
	var cf clusterFlags
	cf.register(fs)
	want := fs.String("plan", "", "the id of the plan reviewed (as modkind plan shows it); refused when another plan waits")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fs.fail("want one instance as <kind>/<name>, got %d arguments", len(pos))
	}
	ref, err := cf.resolve(fs, pos[0])
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	view, err := kind.Approve(ctx, ref.client, ref.gvk, ref.key, *want)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "Approved plan %s (%s) of %s: modkind applies it next.\n", printable.Line(view.ID), printable.Line(view.Summary), ref)
	return err
}
