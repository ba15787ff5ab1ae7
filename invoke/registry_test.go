package invoke

import (
	"context"
	"sync"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func twoVersions() (v1, v2 *toolenv.Collection) {
	v1 = toolenv.NewCollection("weather", "demo", []*toolenv.Tool{
		{Name: "get_weather", Input: toolenv.ObjectSchema()}, {Name: "get_time", Input: toolenv.ObjectSchema()}})
	v1.Version = "v1"
	v2 = toolenv.NewCollection("weather", "demo", []*toolenv.Tool{
		{Name: "fetch_weather", Input: toolenv.ObjectSchema()}, {Name: "get_time", Input: toolenv.ObjectSchema()}})
	v2.Version = "v2"
	return v1, v2
}

// TestReplaceHotLoadsAVersion swaps a collection for a new version: the
// new tools resolve and route to the new backend, the removed ones are
// gone, the old backend is handed back, and subscribers hear of it.
func TestReplaceHotLoadsAVersion(t *testing.T) {
	v1, v2 := twoVersions()
	b1, b2 := &countingBackend{source: "v1"}, &countingBackend{source: "v2"}
	reg := NewRegistry()
	var mu sync.Mutex
	var heard []string
	cancel := reg.Subscribe(func(name string) {
		mu.Lock()
		heard = append(heard, name+"@"+reg.Collection(name).Version)
		mu.Unlock()
	})
	if err := reg.Add(v1, b1); err != nil {
		t.Fatal(err)
	}
	old, err := reg.Replace(v2, b2)
	if err != nil {
		t.Fatal(err)
	}
	if old != b1 {
		t.Errorf("Replace returned %v, want the old backend", old)
	}
	if got := reg.Collection("weather"); got != v2 {
		t.Fatalf("collection is %v after Replace", got.Version)
	}
	if reg.Tool("weather/get_weather") != nil {
		t.Error("a tool of the old version only still resolves by ID")
	}
	if _, _, res := reg.Resolve("weather", "get_weather"); res == nil || res.Status != toolenv.StatusUnknownTool {
		t.Errorf("resolving a removed tool: %+v", res)
	}
	call, res := reg.NewCall("weather", "fetch_weather", map[string]any{})
	if res != nil {
		t.Fatal(res.Error)
	}
	if r := reg.Invoke(context.Background(), call); r.Source != "v2" || b2.calls.Load() != 1 || b1.calls.Load() != 0 {
		t.Errorf("call went to %s (v1 calls %d, v2 calls %d)", r.Source, b1.calls.Load(), b2.calls.Load())
	}
	if reg.Tool("weather/get_time") != v2.Tool("get_time") {
		t.Error("a tool both versions have must resolve to the new version's")
	}
	// Replace of a collection not loaded adds it.
	other := toolenv.NewCollection("other", "demo", []*toolenv.Tool{{Name: "x", Input: toolenv.ObjectSchema()}})
	if old, err := reg.Replace(other, b1); err != nil || old != nil {
		t.Errorf("Replace of a new collection: %v, %v", old, err)
	}
	cancel()
	v3, _ := twoVersions()
	if _, err := reg.Replace(v3, b1); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"weather@v1", "weather@v2", "other@"}
	if len(heard) != len(want) {
		t.Fatalf("subscriber heard %v, want %v (and nothing after cancel)", heard, want)
	}
	for i := range want {
		if heard[i] != want[i] {
			t.Errorf("subscriber heard %v, want %v", heard, want)
		}
	}
	if _, err := reg.Replace(toolenv.NewCollection("", "demo", nil), b1); err == nil {
		t.Error("an invalid collection was hot-loaded")
	}
}
