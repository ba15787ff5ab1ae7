package truth

import (
	"encoding/json"
	"fmt"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/mapping/structural"
)

// FromDrift reads the ground truth of a drift chain: every tool of the
// base version (old, as collection oldName) maps to its current name (in
// cur, as collection newName) — its successor when it was deprecated, not
// the stub left at its old name — and every argument and response field
// of the base tool (as the structural profile sees them) maps to its path
// after the manifest's renames and nesting, applied step by step and in
// order (a field renamed inside an object that was itself renamed
// follows both). Hidden tools are left out.
//
// It checks that every counterpart exists in cur; a manifest that does
// not describe old → cur is an error.
func FromDrift(m *drift.Manifest, old, cur []*toolenv.Tool, oldName, newName string) (*Truth, error) {
	t := New(fmt.Sprintf("drift %s %s→%s", m.Collection, m.BaseVersion, m.Version))
	curByName := map[string]*toolenv.Tool{}
	for _, tl := range cur {
		curByName[tl.Name] = tl
	}
	for _, ot := range old {
		if ot.Hidden() {
			continue
		}
		p := structural.NewProfile(ot, nil)
		name := ot.Name
		ins := paths(p.Inputs)
		outs := paths(p.Outputs)
		for i := range m.Steps {
			tc := stepChange(&m.Steps[i], name)
			if tc == nil {
				continue
			}
			for _, c := range tc.Changes {
				for k := range ins {
					ins[k] = applyParamChange(ins[k], c)
				}
				for k := range outs {
					outs[k] = applyFieldChange(outs[k], c)
				}
			}
			name = tc.Name
		}
		nt := curByName[name]
		if nt == nil {
			return nil, fmt.Errorf("truth from drift: tool %s becomes %s, which the current version does not have (is the manifest for these collections?)", ot.Name, name)
		}
		from, to := toolenv.ToolID(oldName, ot.Name), toolenv.ToolID(newName, nt.Name)
		t.Tools[from] = to
		if nt.Name != ot.Name {
			t.ChangedTools[from] = true
		}
		for i, f := range p.Inputs {
			t.addField(t.Inputs, from, f.Path, ins[i])
		}
		for i, f := range p.Outputs {
			t.addField(t.Outputs, from, f.Path, outs[i])
		}
	}
	return t, nil
}

func paths(fs []*structural.Field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Path
	}
	return out
}

// stepChange returns the change step s made to the tool named name in
// its From version, or nil.
func stepChange(s *drift.Step, name string) *drift.ToolChange {
	for i := range s.Tools {
		if s.Tools[i].Tool == name {
			return &s.Tools[i]
		}
	}
	return nil
}

// applyParamChange moves an argument path through one change: a rename
// of its top-level parameter, or the nesting of that parameter into an
// object.
func applyParamChange(path string, c drift.Change) string {
	top, rest, _ := strings.Cut(path, ".")
	with := func(head string) string {
		if rest != "" {
			return head + "." + rest
		}
		return head
	}
	switch c.Op {
	case drift.OpRenameParam:
		if top == c.Param {
			return with(c.To)
		}
	case drift.OpNest:
		for _, mem := range c.Members {
			if top == mem.Param {
				return with(c.Param + "." + mem.Key)
			}
		}
	}
	return path
}

// applyFieldChange moves a response field path through one change: a
// rename of key From in the objects at Path ("" top level, "[]" elements
// of a top-level array, "results[]" elements under results), in the
// names the path has at that point.
func applyFieldChange(path string, c drift.Change) string {
	if c.Op != drift.OpRenameField {
		return path
	}
	var obj, out strings.Builder
	for i, part := range strings.Split(path, ".") {
		key := strings.TrimRight(part, "[]")
		arrays := part[len(key):]
		nk := key
		if key != "" && key == c.From && obj.String() == c.Path {
			nk = c.To
		}
		if i > 0 {
			out.WriteByte('.')
		}
		out.WriteString(nk + arrays)
		if obj.Len() > 0 && key != "" {
			obj.WriteByte('.')
		}
		obj.WriteString(key + arrays)
	}
	return out.String()
}

// FromSELMeta reads the ground truth of SEL → SLOT: every SEL tool whose
// meta names a SLOT operation ("op") maps to it with the arguments its
// meta fixes ("fixed"); arguments of one name correspond.
func FromSELMeta(sel, slot *toolenv.Collection) (*Truth, error) {
	t := New(fmt.Sprintf("%s → %s (SEL meta)", sel.Name, slot.Name))
	t.Fixed = map[string]map[string]any{}
	for _, st := range sel.Tools {
		if st.Hidden() {
			continue
		}
		target := slot.Tool(st.Meta["op"])
		if target == nil || target.Hidden() {
			continue
		}
		from := st.ID
		t.Tools[from] = target.ID
		if st.Name != target.Name {
			t.ChangedTools[from] = true
		}
		fixed := map[string]any{}
		if raw := st.Meta["fixed"]; raw != "" {
			if err := toolenv.DecodeJSON([]byte(raw), &fixed); err != nil {
				return nil, fmt.Errorf("truth from SEL meta: tool %s: fixed %q: %w", st.Name, raw, err)
			}
		}
		t.Fixed[from] = fixed
		targetPaths := map[string]bool{}
		for _, f := range structural.NewProfile(target, nil).Inputs {
			targetPaths[f.Path] = true
		}
		for _, f := range structural.NewProfile(st, nil).Inputs {
			if targetPaths[f.Path] {
				t.addField(t.Inputs, from, f.Path, f.Path)
			}
		}
	}
	if len(t.Tools) == 0 {
		return nil, fmt.Errorf("truth from SEL meta: no tool of %s names an operation of %s in its meta (op)", sel.Name, slot.Name)
	}
	return t, nil
}

// MarshalIndent renders scores for reports.
func (s *Scores) MarshalIndent() []byte {
	b, _ := json.MarshalIndent(s, "", "  ")
	return b
}
