package toolbenchtest

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/toolbench"
)

// TestGeneratedCacheIsStableToolBenchs: StableToolBench's own lookup
// (stb_lookup.py, in Python) finds every generated entry of every file it
// can read under the generator's key, with the generator's answer; so the
// keys are Python's str() of what the client sends, byte for byte.
func TestGeneratedCacheIsStableToolBenchs(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		dir := t.TempDir()
		rng := rand.New(rand.NewPCG(seed, 9))
		set, err := WriteToolSet(filepath.Join(dir, "tools"), rng, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := toolbench.Load(set.Dir); err != nil {
			t.Fatalf("seed %d: the tool set does not load: %v", seed, err)
		}
		entries, err := WriteCache(filepath.Join(dir, "cache"), set, rng, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var reqs []Request
		var readable []*Entry
		for _, e := range entries {
			if !e.InCutFile {
				reqs, readable = append(reqs, e.Request()), append(readable, e)
			}
		}
		res, err := Lookup(context.Background(), filepath.Join(dir, "cache"), reqs)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			e := readable[i]
			if !r.Hit || r.Key != e.Key {
				t.Errorf("seed %d: %s %+v: StableToolBench finds %+v; the generator wrote the key %s in %s", seed, e.File, e.Request(), r, e.Key, e.File)
				continue
			}
			var got struct {
				Error    string          `json:"error"`
				Response json.RawMessage `json:"response"`
			}
			if err := json.Unmarshal(r.Value, &got); err != nil {
				t.Fatal(err)
			}
			a, _ := toolenv.CanonicalizeJSON(got.Response)
			b, _ := toolenv.CanonicalizeJSON(e.Want)
			if got.Error != e.Error || string(a) != string(b) || r.NonFinite != e.NonFinite {
				t.Errorf("seed %d: %s: StableToolBench reads %s / %s, the generator wrote %s / %s", seed, e.Key, got.Error, a, e.Error, b)
			}
		}
		t.Logf("seed %d: %d APIs, %d entries (%d in files StableToolBench can read)", seed, len(set.APIs), len(entries), len(readable))
	}
}
