package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/modkind/modkind/apis"
	"github.com/modkind/modkind/cmd/cluster"
	"github.com/modkind/modkind/kind"
	"github.com/modkind/modkind/printable"
	"github.com/modkind/modkind/state"
)

// stateUsage is the synopsis of modkind state.
const stateUsage = `modkind state show <kind>/<name> [-n namespace]     print the state an instance's Secret holds, and its digest
modkind state accept <kind>/<name> [-n namespace] --digest <digest>
                                                    sign that state, once reviewed, if it is still the one
                                                    shown with that digest: the controller runs with it again
modkind state rotate-key                            add a new key to the state signing keys

Flags of every subcommand: --kubeconfig file, --context name, --keys namespace/name (the key ring's Secret,
` + apis.DefaultNamespace + "/" + state.DefaultKeysSecret + ` by default)`

// stateCommand reads and signs the states the controller keeps, as a cluster admin: it needs
// to read the state signing keys in the controller's namespace.
func stateCommand(args []string, out io.Writer) error {
	fs := newCommandFlags("state", stateUsage)
	if len(args) == 0 {
		return fs.fail("want a subcommand: show, accept or rotate-key")
	}
	sub, args := args[0], args[1:]
	if strings.HasPrefix(sub, "-") {
		// A flag before the subcommand (`modkind state --help`): parsed as flags, so that help
		// prints the usage and starts nothing, and any other flag says the subcommand is missing.
		args, sub = append([]string{sub}, args...), ""
	}
	fs = newCommandFlags("state", stateUsage)
	var cf cluster.Flags
	cf.Register(fs.FlagSet, true)
	digest := fs.String("digest", "", "accept: the digest modkind state show printed for the state reviewed; any other state is refused")
	keysAt := fs.String("keys", apis.DefaultNamespace+"/"+state.DefaultKeysSecret, "namespace/name of the Secret holding the state signing keys (the controller's --state-keys-secret)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	keys, err := cluster.ParseNamespacedName(*keysAt)
	if err != nil {
		return fs.fail("--keys: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	switch sub {
	case "rotate-key":
		if len(pos) != 0 {
			return fs.fail("rotate-key takes no arguments")
		}
		return rotateKey(ctx, &cf, keys, out)
	case "show", "accept":
	case "":
		return fs.fail("want a subcommand: show, accept or rotate-key")
	default:
		return fs.fail("unknown subcommand %q: want show, accept or rotate-key", sub)
	}
	if len(pos) != 1 {
		return fs.fail("want one instance as <kind>/<name>, got %d arguments", len(pos))
	}
	switch {
	case sub == "accept" && *digest == "":
		show := "modkind state show " + pos[0]
		if cf.Namespace != "" {
			show += " -n " + cf.Namespace
		}
		return fs.fail("want --digest: run %s first, review the state it prints, and pass the digest it prints: only the state shown with it is signed", show)
	case sub == "show" && *digest != "":
		return fs.fail("--digest is for accept: show prints the digest of the state it shows")
	}
	ref, err := resolve(&cf, fs, pos[0])
	if err != nil {
		return err
	}
	sref := kind.StateRef(ref.gvk.GroupKind().String(), ref.key.Namespace, ref.key.Name)
	store := &state.Store{Client: ref.client}
	if sub == "show" {
		st, err := store.Get(ctx, sref)
		if err != nil {
			return err
		}
		if st == nil {
			return fmt.Errorf("%s has no state Secret %s", ref, sref.Name)
		}
		return showState(out, st, ref, pos[0], sref.Name)
	}
	return acceptState(ctx, store, ref, sref, keys, *digest, out)
}

// acceptState signs the state of ref's Secret sref with the newest key of the ring keys names,
// if the state stored is still the one whose review digest is digest.
func acceptState(ctx context.Context, store *state.Store, ref *instanceRef, sref state.Ref, keys types.NamespacedName, digest string, out io.Writer) error {
	ring, err := state.LoadKeys(ctx, ref.client, keys, false)
	if err != nil {
		return err
	}
	store.Keys = state.StaticKeys{KeyRing: ring}
	st, err := store.Accept(ctx, sref, digest)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "Accepted state Secret %s of %s: lineage %s, serial %d, %s. Signed with key %s; modkind runs with it from its next poll.\n",
		sref.Name, ref, printable.Line(st.Lineage), st.Serial, describeState(st.State), ring.Current())
	return err
}

// rotateKey adds a new key to the state signing keys in the Secret keys names.
func rotateKey(ctx context.Context, cf *cluster.Flags, keys types.NamespacedName, out io.Writer) error {
	c, _, err := cf.Client(nil)
	if err != nil {
		return err
	}
	id, err := state.AddKey(ctx, c, keys, time.Now())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "Added key %s to %s: the controller signs with it within a minute, and signs each state again with it when it next observes its instance (within --resync-interval).\n"+
		"Older keys still verify; remove one from the Secret once every instance was observed since.\n", id, keys)
	return err
}

// describeState says what a state tracks, for the admin who accepts it.
func describeState(st *state.State) string {
	var body struct {
		Resources []struct {
			Module string `json:"module"`
			Mode   string `json:"mode"`
			Type   string `json:"type"`
			Name   string `json:"name"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(st.Raw, &body); err != nil || len(body.Resources) == 0 {
		return "no resources"
	}
	var addrs []string
	for _, r := range body.Resources {
		a := r.Type + "." + r.Name
		if r.Mode == "data" {
			a = "data." + a
		}
		if r.Module != "" {
			a = r.Module + "." + a
		}
		addrs = append(addrs, a)
	}
	return fmt.Sprintf("%d resources (%s)", len(addrs), printable.Line(strings.Join(addrs, ", ")))
}

// showState prints a state for review: its bytes as stored, with the characters a terminal would
// act on or hide shown escaped, then what identifies exactly those bytes, its review digest, and
// the command that signs them. The bytes are printed as stored, not parsed and printed again: the
// admin signs the stored bytes and reads those, and a trick played with them (a carriage return
// in JSON whitespace that would blank a line on the screen) shows as what it is, escaped, instead
// of vanishing from view. Valid JSON holds control characters only as whitespace, and other
// characters that need escaping only inside strings, where the escape shown (\u202e) is the JSON
// escape of the very character stored: what is shown means the same as what is signed.
func showState(out io.Writer, st *state.Stored, ref *instanceRef, arg, secret string) error {
	raw := string(st.Raw)
	shown := printable.Text(raw)
	escaped := shown != raw
	if !strings.HasSuffix(shown, "\n") {
		shown += "\n"
	}
	if _, err := io.WriteString(out, shown); err != nil {
		return err
	}
	sum := sha256.Sum256(st.Raw)
	fmt.Fprintf(out, "---\nState Secret %s of %s: resourceVersion %s, %d bytes, SHA-256 %x.\n", secret, ref, st.Version, len(st.Raw), sum)
	if escaped {
		fmt.Fprintln(out, `It holds characters a terminal would act on or not show (such as \r, \x1b, \u202e): they are shown escaped above; the digest is of the bytes as stored.`)
	}
	if dup := state.DuplicateKey(st.Raw); dup != "" {
		fmt.Fprintf(out, "It holds key %q twice in one object (or twice but for case): terraform reads the last one. It cannot be accepted.\n", printable.Line(dup))
	}
	if !terraformLayout(st.Raw) {
		fmt.Fprintln(out, "It is not laid out as terraform writes a state (JSON indented by two spaces): whitespace was edited, and may push text out of view.")
	}
	_, err := fmt.Fprintf(out, "Once reviewed, sign exactly this state with:\n  modkind state accept %s -n %s --digest %s\n", arg, ref.key.Namespace, st.ReviewDigest())
	return err
}

// terraformLayout reports whether raw is JSON laid out as terraform writes a state file:
// indented by two spaces, with no other whitespace than that between its tokens.
func terraformLayout(raw []byte) bool {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return false
	}
	return bytes.Equal(bytes.TrimRight(b.Bytes(), "\n"), bytes.TrimRight(raw, "\n"))
}
