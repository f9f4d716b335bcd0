package integration

import (
	"os"
	"path/filepath"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// argoHealth runs examples/argocd/health.lua, with gopher-lua as Argo CD embeds it, on a real
// object read back from the API server, and returns the health status it gives.
func argoHealth(t testing.TB, u *unstructured.Unstructured) string {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("..", "..", "examples", "argocd", "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("obj", toLua(L, u.Object))
	if err := L.DoString(string(script)); err != nil {
		t.Fatalf("health.lua: %v", err)
	}
	hs, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("health.lua must return a table, got %v", L.Get(-1))
	}
	return hs.RawGetString("status").String()
}

// toLua converts JSON-like data the way Argo CD hands objects to Lua: maps and lists as tables.
func toLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		t := L.NewTable()
		for k, e := range v {
			t.RawSetString(k, toLua(L, e))
		}
		return t
	case []any:
		t := L.NewTable()
		for _, e := range v {
			t.Append(toLua(L, e))
		}
		return t
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case nil:
		return lua.LNil
	}
	return lua.LNil
}

func assertArgoHealth(t testing.TB, u *unstructured.Unstructured, want string) {
	t.Helper()
	if got := argoHealth(t, u); got != want {
		t.Errorf("Argo CD health of %s: want %s, got %s", u.GetName(), want, got)
	}
}

// The argocd-cm snippet carries exactly examples/argocd/health.lua, and module-health.lua for Modules.
func TestArgoCDConfigMapCarriesHealthLua(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "examples", "argocd", "argocd-cm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatal(err)
	}
	var custom map[string]map[string]string
	if err := yaml.Unmarshal([]byte(cm.Data["resource.customizations"]), &custom); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "examples", "argocd", "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	if got := custom["*.example.org/*"]["health.lua"]; got != string(want) {
		t.Errorf("argocd-cm.yaml's health.lua differs from health.lua")
	}
	wantModule, err := os.ReadFile(filepath.Join("..", "..", "examples", "argocd", "module-health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	if got := custom["modkind.io/Module"]["health.lua"]; got != string(wantModule) {
		t.Errorf("argocd-cm.yaml's modkind.io/Module health.lua differs from module-health.lua")
	}
	if cm.Data["application.resourceTrackingMethod"] != "annotation" {
		t.Errorf("the snippet must recommend annotation tracking")
	}
}
