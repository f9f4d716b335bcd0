package e2e

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modkind/modkind/cmd/controller"
	"github.com/modkind/modkind/reconcile"
	"github.com/modkind/modkind/reconcile/reconciletest"
)

// The quickstart that `make run` applies works end to end: the Module becomes a kind, the
// instance becomes Ready, and its outputs are printed, the sensitive one only by name.
func TestQuickstart(t *testing.T) {
	cfg := reconcile.DefaultConfig()
	cfg.Dir = t.TempDir()
	g, err := reconciletest.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)

	var out bytes.Buffer
	if err := controller.RunQuickstart(ctx, g.Client, filepath.Join("..", "..", "examples", "quickstart"), &out); err != nil {
		t.Fatalf("quickstart: %v\n%s", err, out.String())
	}
	for _, want := range []string{"Greeting default/world is Ready.", "message: Hello, World!", "[id message token]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("quickstart output lacks %q:\n%s", want, out.String())
		}
	}
}
