package truth

import (
	"fmt"
	"os"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping/structural"
)

// obfuscation is nl2api's mapping file (<folder>.mapping.json): obfuscated tool and argument
// names mapped to the original ones.
type obfuscation struct {
	Collection string            `json:"collection"`
	Original   string            `json:"original"`
	Tools      map[string]string `json:"tools"`
	Arguments  map[string]string `json:"arguments"`
}

// FromObfuscation reads the ground truth of an obfuscated NL2SQL variant
// (written by toolenv build bird --obfuscate: tools named FUNC_n,
// arguments ARG_n, descriptions kept): every original tool maps to its
// obfuscated twin, every argument to its ARG_n, every response field to
// itself. Names say nothing here; only descriptions, types and structure
// do.
func FromObfuscation(path string, orig, obf *toolenv.Collection) (*Truth, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("truth from obfuscation: %w", err)
	}
	var o obfuscation
	if err := toolenv.DecodeJSON(data, &o); err != nil {
		return nil, fmt.Errorf("truth from obfuscation %s: %w", path, err)
	}
	if o.Collection != obf.Name || o.Original != orig.Name {
		return nil, fmt.Errorf("truth from obfuscation %s: it maps %s to %s, not %s to %s", path, o.Original, o.Collection, orig.Name, obf.Name)
	}
	t := New(fmt.Sprintf("obfuscation %s → %s", orig.Name, obf.Name))
	for obfName, origName := range o.Tools {
		ot, nt := orig.Tool(origName), obf.Tool(obfName)
		if ot == nil || nt == nil {
			return nil, fmt.Errorf("truth from obfuscation %s: tool %s ↔ %s is missing from the collections", path, origName, obfName)
		}
		from := ot.ID
		t.Tools[from] = nt.ID
		t.ChangedTools[from] = true
		for _, n := range nt.Input.Names() {
			origArg := n // "label" keeps its name
			if a, ok := o.Arguments[n]; ok {
				origArg = a
			}
			t.addField(t.Inputs, from, origArg, n)
		}
		for _, f := range structural.NewProfile(ot, nil).Outputs {
			t.addField(t.Outputs, from, f.Path, f.Path)
		}
	}
	return t, nil
}
