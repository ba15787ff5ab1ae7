package drift

import (
	"bytes"
	"encoding/json"
	"fmt"

	toolenv "github.com/toolenv/toolenv"
)

// apply makes step s on the tools of its From version and returns the
// tools of its To version: changed tools in place, then the stubs of
// earlier steps (their successors renamed as s renames them), then the
// stubs s leaves. The input is not modified.
func (s *Step) apply(tools []*toolenv.Tool) ([]*toolenv.Tool, error) {
	out := make([]*toolenv.Tool, len(tools))
	byName := make(map[string]*toolenv.Tool, len(tools))
	for i, t := range tools {
		out[i] = t.Clone()
		byName[t.Name] = out[i]
	}
	env := applyEnv{from: s.From, to: s.To}
	var stubs []*toolenv.Tool
	for i := range s.Tools {
		tc := &s.Tools[i]
		t := byName[tc.Tool]
		if t == nil {
			return nil, fmt.Errorf("step %s→%s changes tool %q, which version %s does not have", s.From, s.To, tc.Tool, s.From)
		}
		if t.Meta[MetaStub] == "true" {
			return nil, fmt.Errorf("step %s→%s changes %q, a stub left by an earlier step", s.From, s.To, tc.Tool)
		}
		before := t.Clone()
		for j := range tc.Changes {
			if err := tc.Changes[j].apply(t, env); err != nil {
				return nil, fmt.Errorf("step %s→%s, tool %s, change %d: %w", s.From, s.To, tc.Tool, j+1, err)
			}
		}
		if t.Name != tc.Name {
			return nil, fmt.Errorf("step %s→%s, tool %s: its changes name it %q, not %q", s.From, s.To, tc.Tool, t.Name, tc.Name)
		}
		if tc.Stub != "" {
			stubs = append(stubs, makeStub(before, tc, s.To))
		}
	}
	for _, t := range out {
		if t.Meta[MetaStub] == "true" && t.Deprecated != nil {
			if tc := s.change(t.Deprecated.Successor); tc != nil {
				t.Deprecated.Successor = tc.Name
			}
		}
	}
	out = append(out, stubs...)
	seen := make(map[string]bool, len(out))
	for _, t := range out {
		if seen[t.Name] {
			return nil, fmt.Errorf("step %s→%s makes two tools named %q", s.From, s.To, t.Name)
		}
		seen[t.Name] = true
	}
	return out, nil
}

// makeStub turns the old version of a tool into the stub left at its old
// name or endpoint.
func makeStub(old *toolenv.Tool, tc *ToolChange, since string) *toolenv.Tool {
	st := old
	st.Name = tc.Stub
	if st.Meta == nil {
		st.Meta = map[string]string{}
	}
	st.Meta[MetaStub] = "true"
	msg := fmt.Sprintf("%s was replaced by %s in %s", tc.Tool, tc.Name, since)
	if tc.Stub != tc.Tool {
		msg = fmt.Sprintf("this endpoint of %s moved in %s; call %s", tc.Tool, since, tc.Name)
	}
	st.Deprecated = &toolenv.Deprecation{Successor: tc.Name, Since: since, Message: msg}
	if tc.StubListed {
		st.Description = fmt.Sprintf("Deprecated since %s: use %s instead. %s", since, tc.Name, st.Description)
	} else {
		st.Meta[MetaHidden] = "true"
	}
	return st
}

// Replay applies every step of m to the base tools and returns the tools
// of every version, base first. The base tools are not modified.
func (m *Manifest) Replay(base []*toolenv.Tool) ([][]*toolenv.Tool, error) {
	versions := [][]*toolenv.Tool{base}
	cur := base
	for i := range m.Steps {
		next, err := m.Steps[i].apply(cur)
		if err != nil {
			return nil, fmt.Errorf("replay drift manifest of %s: %w", m.Collection, err)
		}
		versions = append(versions, next)
		cur = next
	}
	return versions, nil
}

// Verify checks that m turns the tools of base into exactly the tools of
// current (the drifted collection): a manifest that does not match its
// collection is an error naming the first tool that differs.
func (m *Manifest) Verify(base, current *toolenv.Collection) error {
	if base.Name != current.Name {
		return fmt.Errorf("drift manifest: the base collection is %q but the drifted one is %q", base.Name, current.Name)
	}
	versions, err := m.Replay(base.Tools)
	if err != nil {
		return err
	}
	return m.verify(versions, current)
}

// verify is Verify given the manifest's replay on the base (Open has it
// already: replaying is the costly part).
func (m *Manifest) verify(versions [][]*toolenv.Tool, current *toolenv.Collection) error {
	got := versions[len(versions)-1]
	if len(got) != len(current.Tools) {
		return fmt.Errorf("drift manifest does not match collection %s: replaying it gives %d tools, tools.json has %d (was tools.json edited by hand? drift again from the base)", current.Name, len(got), len(current.Tools))
	}
	for i, t := range got {
		want := current.Tools[i]
		same, err := sameTool(t, want, current.Name)
		if err != nil {
			return err
		}
		if !same {
			return fmt.Errorf("drift manifest does not match collection %s: tool %d is %q after replaying the manifest but %q in tools.json, or they differ (was tools.json edited by hand? drift again from the base)", current.Name, i+1, t.Name, want.Name)
		}
	}
	return nil
}

// sameTool says whether tools a and b have the same canonical JSON in
// collection coll. Their encodings are compared first: equal encodings
// have equal canonical forms, and a replayed tool is encoded as the
// tools.json it was written to, so most pairs need no canonical form (a
// JSON round trip of every tool on every open of a drifted collection).
func sameTool(a, b *toolenv.Tool, coll string) (bool, error) {
	ra, err := encodeTool(a, coll)
	if err != nil {
		return false, err
	}
	rb, err := encodeTool(b, coll)
	if err != nil {
		return false, err
	}
	if bytes.Equal(ra, rb) {
		return true, nil
	}
	ca, err := toolenv.CanonicalizeJSON(ra)
	if err != nil {
		return false, fmt.Errorf("encode tool %s: %w", a.Name, err)
	}
	cb, err := toolenv.CanonicalizeJSON(rb)
	if err != nil {
		return false, fmt.Errorf("encode tool %s: %w", b.Name, err)
	}
	return bytes.Equal(ca, cb), nil
}

// encodeTool is a tool's JSON as it would be in collection coll.
func encodeTool(t *toolenv.Tool, coll string) ([]byte, error) {
	c := *t
	c.Collection, c.ID = coll, toolenv.ToolID(coll, t.Name)
	raw, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("encode tool %s: %w", t.Name, err)
	}
	return raw, nil
}
