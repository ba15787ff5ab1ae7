package drift

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// ManifestFormat is the format version of manifest.json.
const ManifestFormat = 1

// ManifestFile is the manifest's file name in a drifted collection folder.
const ManifestFile = "manifest.json"

// Manifest says how a drifted collection derives from its base: the chain
// of drift steps from the base version to the current one, each with the
// exact changes made to each tool. It is ground truth for what changed:
// Forward and Backward translate calls between any two versions of the
// chain, and Alignments lists every old→new name mapping.
type Manifest struct {
	// Format is ManifestFormat.
	Format int `json:"format"`
	// Collection is the name of the collection (the same in every
	// version, so that cache keys of unchanged tools stay the same).
	Collection string `json:"collection"`
	// Kind is the collection's kind ("demo", "toolbench", "nl2sql-slot",
	// …).
	Kind string `json:"kind"`
	// BaseVersion is the version the chain starts from.
	BaseVersion string `json:"base_version"`
	// Version is the version the chain ends at (the last step's To).
	Version string `json:"version"`
	// Steps are the drift steps, oldest first.
	Steps []Step `json:"steps"`
}

// Step is one drift step: version From to version To.
type Step struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Seed is the seed the step was drawn with.
	Seed uint64 `json:"seed"`
	// Operators are the operators the step ran, in the order they ran.
	Operators []string `json:"operators"`
	// Rates are the per-site probabilities the operators used.
	Rates map[string]float64 `json:"rates"`
	// Tools are the tools the step changed, sorted by their name in From.
	// A tool that is not listed is the same in both versions.
	Tools []ToolChange `json:"tools"`
	// Provenance is the toolenv that made the step and its options.
	Provenance *toolenv.Provenance `json:"provenance,omitempty"`

	byTo map[string]int // Tools by their name in To (Check builds it)
}

// ToolChange is what one step did to one tool.
type ToolChange struct {
	// Tool is the tool's name in the step's From version.
	Tool string `json:"tool"`
	// Name is its name in the To version (equal to Tool unless renamed).
	Name string `json:"name"`
	// Stub, when set, is the name of the tool left behind at the old
	// name or endpoint: it keeps the old documentation and answers
	// StatusGone pointing to Name (strict mode), or forwards to Name
	// (compat mode).
	Stub string `json:"stub,omitempty"`
	// StubListed says the stub stays documented, marked deprecated (the
	// deprecation operator); otherwise it is hidden (Meta hidden=true) and
	// only catches old calls.
	StubListed bool `json:"stub_listed,omitempty"`
	// Changes are the changes, in the order they were applied.
	Changes []Change `json:"changes"`
}

// The change kinds (Change.Op).
const (
	OpRenameTool   = "rename_tool"   // From → To (the tool's name)
	OpEndpoint     = "endpoint"      // OldEndpoint → NewEndpoint
	OpRenameParam  = "rename_param"  // Param → To
	OpRetype       = "retype"        // Param: FromType → ToType
	OpEnumCase     = "enum_case"     // Param: enum values Values[i].From → Values[i].To
	OpMakeOptional = "make_optional" // Param: required → optional, absent means NewValue
	OpMakeRequired = "make_required" // Param: optional → required; absent used to mean OldValue
	OpFlipDefault  = "flip_default"  // Param: default OldValue → NewValue
	OpNest         = "nest"          // Members[i].Param → Param.Members[i].Key
	OpRenameField  = "rename_field"  // response field Param → To in objects at Path
	OpErrorFormat  = "error_format"  // error messages rendered in Style
	OpDeprecate    = "deprecate"     // the old tool stays, deprecated, pointing to To
)

// Change is one exact, invertible change to one tool. Which fields are set
// depends on Op (see the Op constants).
type Change struct {
	// Op is the kind of change.
	Op string `json:"op"`
	// Operator is the operator that made it (Operators; several make
	// OpRenameTool and OpEndpoint).
	Operator string `json:"operator,omitempty"`
	// Rule is the rule that produced it ("synonym", "case",
	// "abbreviation", "action", "version", "host", "path", "upper", …).
	Rule string `json:"rule,omitempty"`
	// Param is the parameter (or response field) concerned, by its name
	// in the step's From version; for OpNest the new object parameter.
	Param string `json:"param,omitempty"`
	// From and To are the old and new name (OpRenameTool, OpRenameParam,
	// OpRenameField; OpDeprecate: To is the successor).
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// FromTitle and ToTitle are the tool's old and new documented title
	// when OpRenameTool changes it too (ToolBench APIs are named after
	// their title).
	FromTitle string `json:"from_title,omitempty"`
	ToTitle   string `json:"to_title,omitempty"`
	// FromType and ToType are the old and new JSON Schema types (OpRetype).
	FromType string `json:"from_type,omitempty"`
	ToType   string `json:"to_type,omitempty"`
	// OldValue and NewValue are JSON values: the old and new default
	// (OpFlipDefault), the value an absent argument meant (OpMakeRequired:
	// OldValue) or means now (OpMakeOptional: NewValue).
	OldValue json.RawMessage `json:"old_value,omitempty"`
	NewValue json.RawMessage `json:"new_value,omitempty"`
	// Values maps enum values (OpEnumCase).
	Values []ValuePair `json:"values,omitempty"`
	// Members are the flat parameters grouped into the object Param
	// (OpNest), in order.
	Members []Member `json:"members,omitempty"`
	// Path locates the objects whose field is renamed (OpRenameField):
	// "" is the top-level object, "[]" the elements of a top-level array,
	// "results[]" the elements of the array under "results", "data.item"
	// the object under data.item.
	Path string `json:"path,omitempty"`
	// OldEndpoint and NewEndpoint are the HTTP binding before and after
	// (OpEndpoint).
	OldEndpoint *Endpoint `json:"old_endpoint,omitempty"`
	NewEndpoint *Endpoint `json:"new_endpoint,omitempty"`
	// Style is the new error format (OpErrorFormat).
	Style *ErrorStyle `json:"style,omitempty"`

	dec *decoded // the JSON values decoded (Check prepares them)
}

// ValuePair maps one enum value.
type ValuePair struct {
	From json.RawMessage `json:"from"`
	To   json.RawMessage `json:"to"`
}

// Member is one flat parameter grouped into an object: Param (old, flat)
// is Key inside the object.
type Member struct {
	Param string `json:"param"`
	Key   string `json:"key"`
}

// Endpoint is a tool's HTTP binding as drift changes it.
type Endpoint struct {
	Method  string `json:"method,omitempty"`
	Path    string `json:"path,omitempty"`
	BaseURL string `json:"base_url,omitempty"`
}

// ErrorStyle is how a version renders error messages: Template with
// "{code}" and "{message}" placeholders, the code written in CodeStyle
// ("upper_snake", "kebab", "camel", "dotted", "http").
type ErrorStyle struct {
	CodeStyle string `json:"code_style"`
	Template  string `json:"template"`
}

// ReadManifest reads a manifest file and checks its shape.
func ReadManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read drift manifest: %w", err)
	}
	var m Manifest
	if err := toolenv.DecodeJSON(data, &m); err != nil {
		return nil, fmt.Errorf("read drift manifest %s: %w", path, err)
	}
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("drift manifest %s: %w", path, err)
	}
	return &m, nil
}

// Write writes the manifest to path (indented, deterministic, atomic).
func (m *Manifest) Write(path string) error {
	return toolenv.WriteJSONFile(path, m)
}

// Check verifies the manifest is well-formed: a known format, a chain of
// steps whose versions connect, known change kinds with their fields set,
// and tool changes sorted and unique. It does not look at any collection;
// Verify does.
func (m *Manifest) Check() error {
	if m.Format != ManifestFormat {
		return fmt.Errorf("manifest format %d is not supported (this toolenv reads format %d)", m.Format, ManifestFormat)
	}
	if m.Collection == "" {
		return errors.New("manifest names no collection")
	}
	prev := m.BaseVersion
	for i, s := range m.Steps {
		if s.From != prev {
			return fmt.Errorf("step %d goes from %q, but the chain is at %q: steps must connect", i+1, s.From, prev)
		}
		if s.To == "" || s.To == s.From {
			return fmt.Errorf("step %d (%s → %q) does not name a new version", i+1, s.From, s.To)
		}
		for j, tc := range s.Tools {
			if tc.Tool == "" || tc.Name == "" {
				return fmt.Errorf("step %s→%s: tool change %d names no tool", s.From, s.To, j+1)
			}
			if j > 0 && s.Tools[j-1].Tool >= tc.Tool {
				return fmt.Errorf("step %s→%s: tool changes must be sorted by tool and unique (%q after %q)", s.From, s.To, tc.Tool, s.Tools[j-1].Tool)
			}
			for k := range tc.Changes {
				if err := tc.Changes[k].check(); err != nil {
					return fmt.Errorf("step %s→%s, tool %s, change %d: %w", s.From, s.To, tc.Tool, k+1, err)
				}
				tc.Changes[k].dec = decode(&tc.Changes[k])
			}
		}
		m.Steps[i].byTo = make(map[string]int, len(s.Tools))
		for j := range s.Tools {
			m.Steps[i].byTo[s.Tools[j].Name] = j
		}
		prev = s.To
	}
	if len(m.Steps) > 0 && m.Version != prev {
		return fmt.Errorf("manifest version %q is not where its steps end (%q)", m.Version, prev)
	}
	return nil
}

// Versions returns the versions of the chain, base first.
func (m *Manifest) Versions() []string {
	out := []string{m.BaseVersion}
	for _, s := range m.Steps {
		out = append(out, s.To)
	}
	return out
}

// VersionIndex returns the position of version v in Versions, or -1.
func (m *Manifest) VersionIndex(v string) int {
	for i, x := range m.Versions() {
		if x == v {
			return i
		}
	}
	return -1
}

// Compose returns the manifest of a followed by b: b must start where a
// ends, for the same collection. Composing is how chains are made: the
// manifest of v1→v3 is Compose(v1→v2, v2→v3).
func Compose(a, b *Manifest) (*Manifest, error) {
	if a.Collection != b.Collection {
		return nil, fmt.Errorf("compose manifests: collection %q then %q", a.Collection, b.Collection)
	}
	if b.BaseVersion != a.Version {
		return nil, fmt.Errorf("compose manifests: the second starts at %q but the first ends at %q", b.BaseVersion, a.Version)
	}
	out := &Manifest{Format: ManifestFormat, Collection: a.Collection, Kind: a.Kind, BaseVersion: a.BaseVersion, Version: b.Version}
	out.Steps = append(append(out.Steps, a.Steps...), b.Steps...)
	if err := out.Check(); err != nil {
		return nil, fmt.Errorf("compose manifests: %w", err)
	}
	return out, nil
}

// change returns the tool change of step s for the tool named name in
// s.From, or nil.
func (s *Step) change(name string) *ToolChange {
	i := sort.Search(len(s.Tools), func(i int) bool { return s.Tools[i].Tool >= name })
	if i < len(s.Tools) && s.Tools[i].Tool == name {
		return &s.Tools[i]
	}
	return nil
}

// changeTo returns the tool change of step s whose tool is named name in
// s.To, or nil.
func (s *Step) changeTo(name string) *ToolChange {
	if s.byTo != nil {
		if i, ok := s.byTo[name]; ok {
			return &s.Tools[i]
		}
		return nil
	}
	for i := range s.Tools {
		if s.Tools[i].Name == name {
			return &s.Tools[i]
		}
	}
	return nil
}

// stubOf returns the tool change that left a stub named name, or nil.
func (s *Step) stubOf(name string) *ToolChange {
	for i := range s.Tools {
		if s.Tools[i].Stub == name {
			return &s.Tools[i]
		}
	}
	return nil
}

// Rename is one old→new name mapping, for Alignments.
type Rename struct {
	// Kind is "tool", "param" (an argument; New may be a dotted path into
	// a nested object) or "field" (a response field; Path says where).
	Kind string `json:"kind"`
	// Tool is the tool's name in the base version; NewTool its name in
	// the current one.
	Tool    string `json:"tool"`
	NewTool string `json:"new_tool"`
	Path    string `json:"path,omitempty"`
	Old     string `json:"old"`
	New     string `json:"new"`
	// Ops are the change kinds that moved it, oldest first.
	Ops []string `json:"ops"`
}

// Alignments lists, for every tool the chain changed, every tool name,
// parameter and response field whose name differs between the base
// version and the current one: the ground truth of which old name is
// which new name. Parameters nested into objects appear as dotted paths
// ("lat" → "location.lat"). Sorted by tool, kind and old name.
func (m *Manifest) Alignments() []Rename {
	type toolTrack struct {
		base, cur string
		params    map[string]*nameTrack // base name → current path
		fields    map[string]*nameTrack // base path+"\x00"+name → current name
		fpaths    map[string]string
		toolOps   []string
	}
	byCur := map[string]*toolTrack{}
	var all []*toolTrack
	for _, s := range m.Steps {
		next := map[string]*toolTrack{}
		for name, tt := range byCur {
			if s.change(name) == nil {
				next[name] = tt
			}
		}
		for _, tc := range s.Tools {
			tt := byCur[tc.Tool]
			if tt == nil {
				tt = &toolTrack{base: tc.Tool, cur: tc.Tool, params: map[string]*nameTrack{}, fields: map[string]*nameTrack{}, fpaths: map[string]string{}}
				all = append(all, tt)
			}
			for _, c := range tc.Changes {
				switch c.Op {
				case OpRenameTool:
					tt.toolOps = append(tt.toolOps, c.Op)
				case OpRenameParam:
					// Renaming an object an earlier step nested parameters
					// into moves its members: "loc.lat" becomes
					// "location.lat". The object itself is no base
					// parameter, so it gets no track of its own.
					moved := false
					for _, p := range tt.params {
						if rest, ok := strings.CutPrefix(p.cur, c.Param+"."); ok {
							p.cur, p.ops = c.To+"."+rest, append(p.ops, c.Op)
							moved = true
						}
					}
					p := findParam(tt.params, c.Param)
					if p == nil {
						if moved {
							continue
						}
						p = &nameTrack{cur: c.Param}
						tt.params[c.Param] = p
					}
					p.cur, p.ops = c.To, append(p.ops, c.Op)
				case OpNest:
					for _, mem := range c.Members {
						p := findParam(tt.params, mem.Param)
						if p == nil {
							p = &nameTrack{cur: mem.Param}
							tt.params[mem.Param] = p
						}
						p.cur, p.ops = c.Param+"."+mem.Key, append(p.ops, c.Op)
					}
				case OpRenameField:
					k := c.Path + "\x00" + c.From
					var f *nameTrack
					for bk, t := range tt.fields {
						if tt.fpaths[bk] == c.Path && t.cur == c.From {
							f = t
						}
					}
					if f == nil {
						f = &nameTrack{cur: c.From}
						tt.fields[k] = f
						tt.fpaths[k] = c.Path
					}
					f.cur, f.ops = c.To, append(f.ops, c.Op)
				}
			}
			tt.cur = tc.Name
			next[tc.Name] = tt
		}
		byCur = next
	}
	var out []Rename
	for _, tt := range all {
		if tt.base != tt.cur {
			out = append(out, Rename{Kind: "tool", Tool: tt.base, NewTool: tt.cur, Old: tt.base, New: tt.cur, Ops: tt.toolOps})
		}
		for old, p := range tt.params {
			if old != p.cur {
				out = append(out, Rename{Kind: "param", Tool: tt.base, NewTool: tt.cur, Old: old, New: p.cur, Ops: p.ops})
			}
		}
		for k, f := range tt.fields {
			_, old, _ := cutNUL(k)
			if old != f.cur {
				out = append(out, Rename{Kind: "field", Tool: tt.base, NewTool: tt.cur, Path: tt.fpaths[k], Old: old, New: f.cur, Ops: f.ops})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Tool != b.Tool {
			return a.Tool < b.Tool
		}
		if a.Kind != b.Kind {
			return a.Kind > b.Kind // tool, param, field
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Old < b.Old
	})
	return out
}

// nameTrack follows one name through the steps of a chain.
type nameTrack struct {
	cur string
	ops []string
}

// findParam finds the tracked parameter whose current name is cur.
func findParam(params map[string]*nameTrack, cur string) *nameTrack {
	for _, p := range params {
		if p.cur == cur {
			return p
		}
	}
	return nil
}

func cutNUL(s string) (before, after string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
