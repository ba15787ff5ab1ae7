package drift

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	toolenv "github.com/toolenv/toolenv"
)

// BackendType is the Collection.Backend.Type of a drifted collection: its
// calls are translated and executed by its base collection's backend.
const BackendType = "drift"

// BackendConfig is the backend configuration of a drifted collection
// (collection.json "backend.config"): where its manifest and base
// collection are, and where the base collection's own relative paths
// (SQLite files, say) resolve.
type BackendConfig struct {
	// Manifest is the manifest file, relative to the collection folder.
	Manifest string `json:"manifest"`
	// Base is the folder holding the base collection (collection.json +
	// tools.json), relative to the collection folder. Its backend spec is
	// the backend that executes every call.
	Base string `json:"base"`
	// BaseDir is the folder the base collection was read from, relative
	// to the collection folder (or absolute); the base backend resolves
	// its relative paths against it. Empty for collections that were not
	// read from a folder (the embedded demo, ToolBench docs).
	BaseDir string `json:"base_dir,omitempty"`
}

// The Collection.Meta keys of a drifted collection.
const (
	MetaDerivedFrom = "drift_from"     // "<name>@<version>" of the version drifted
	MetaBase        = "drift_base"     // "<name>@<version>" of the chain's base
	MetaSeed        = "drift_seed"     // the last step's seed
	MetaManifest    = "drift_manifest" // the manifest file
)

// Lineage is a collection with its drift history: the current version,
// the base the chain started from, the manifest that leads from one to
// the other, and the tools of every version in between.
type Lineage struct {
	// Current is the collection as served now.
	Current *toolenv.Collection
	// Base is the chain's base collection, named like Current; its
	// backend executes the calls.
	Base *toolenv.Collection
	// Manifest is the chain from Base to Current.
	Manifest *Manifest
	// versions are the tools of every version, base first.
	versions []map[string]*toolenv.Tool
	order    [][]*toolenv.Tool
}

// NewLineage returns the lineage of a collection that was never drifted:
// it is its own base, with an empty manifest.
func NewLineage(c *toolenv.Collection) *Lineage {
	v := c.Version
	if v == "" {
		v = "v1"
	}
	m := &Manifest{Format: ManifestFormat, Collection: c.Name, Kind: c.Kind, BaseVersion: v, Version: v}
	l := &Lineage{Current: c, Base: c, Manifest: m}
	l.index([][]*toolenv.Tool{c.Tools})
	return l
}

// IsDrifted reports whether c is a drifted collection (its backend is
// BackendType).
func IsDrifted(c *toolenv.Collection) bool { return c != nil && c.Backend.Type == BackendType }

// Open loads the lineage of a drifted collection read from its folder
// (c.Dir): its manifest and base collection. It verifies that the manifest
// turns the base tools into exactly c's tools, so a hand-edited
// tools.json or a manifest from another collection is an error here,
// before anything is served or written.
func Open(c *toolenv.Collection) (*Lineage, error) {
	if !IsDrifted(c) {
		return NewLineage(c), nil
	}
	cfg, err := ReadBackendConfig(c)
	if err != nil {
		return nil, err
	}
	if c.Dir == "" {
		return nil, fmt.Errorf("drifted collection %s was not read from a folder: its manifest and base cannot be found", c.Name)
	}
	m, err := ReadManifest(filepath.Join(c.Dir, cfg.Manifest))
	if err != nil {
		return nil, err
	}
	base, err := toolenv.ReadCollection(filepath.Join(c.Dir, cfg.Base))
	if err != nil {
		return nil, fmt.Errorf("drifted collection %s: base collection: %w", c.Name, err)
	}
	if m.Collection != c.Name || base.Name != c.Name {
		return nil, fmt.Errorf("drifted collection %s: its manifest is for %q and its base is %q (the three must share the name; was the folder renamed by hand?)", c.Name, m.Collection, base.Name)
	}
	if m.Version != c.Version {
		return nil, fmt.Errorf("drifted collection %s is version %q but its manifest ends at %q", c.Name, c.Version, m.Version)
	}
	if base.Version != "" && base.Version != m.BaseVersion {
		return nil, fmt.Errorf("drifted collection %s: its base is version %q but the manifest starts at %q", c.Name, base.Version, m.BaseVersion)
	}
	if IsDrifted(base) {
		return nil, fmt.Errorf("drifted collection %s: its base is itself drifted; the base must be the original collection", c.Name)
	}
	base.Dir = ""
	if cfg.BaseDir != "" {
		base.Dir = cfg.BaseDir
		if !filepath.IsAbs(base.Dir) {
			base.Dir = filepath.Join(c.Dir, cfg.BaseDir)
		}
	}
	versions, err := m.Replay(base.Tools)
	if err != nil {
		return nil, fmt.Errorf("drifted collection %s: %w", c.Name, err)
	}
	if err := m.verify(versions, c); err != nil { // Verify, without replaying again
		return nil, err
	}
	l := &Lineage{Current: c, Base: base, Manifest: m}
	l.index(versions)
	return l, nil
}

// ReadBackendConfig decodes the backend configuration of a drifted
// collection.
func ReadBackendConfig(c *toolenv.Collection) (*BackendConfig, error) {
	var cfg BackendConfig
	if len(c.Backend.Config) == 0 {
		return nil, fmt.Errorf("drifted collection %s: collection.json has no backend.config (want {\"manifest\": \"manifest.json\", \"base\": \"base\"})", c.Name)
	}
	if err := toolenv.DecodeJSON(c.Backend.Config, &cfg); err != nil {
		return nil, fmt.Errorf("drifted collection %s: backend.config: %w", c.Name, err)
	}
	if cfg.Manifest == "" || cfg.Base == "" {
		return nil, fmt.Errorf("drifted collection %s: backend.config must name a manifest and a base folder", c.Name)
	}
	return &cfg, nil
}

func (l *Lineage) index(versions [][]*toolenv.Tool) {
	l.order = versions
	l.versions = make([]map[string]*toolenv.Tool, len(versions))
	for i, tools := range versions {
		m := make(map[string]*toolenv.Tool, len(tools))
		for _, t := range tools {
			m[t.Name] = t
		}
		l.versions[i] = m
	}
	// The current version's tools are the collection's own (the pointers
	// the registry resolves calls to).
	last := len(versions) - 1
	if l.Current != nil && len(l.Current.Tools) == len(versions[last]) {
		m := make(map[string]*toolenv.Tool, len(l.Current.Tools))
		for _, t := range l.Current.Tools {
			m[t.Name] = t
		}
		l.versions[last] = m
		l.order[last] = l.Current.Tools
	}
}

// Versions returns the chain's versions, base first.
func (l *Lineage) Versions() []string { return l.Manifest.Versions() }

// ToolAt returns the tool named name in the i-th version (0 is the base),
// or nil.
func (l *Lineage) ToolAt(i int, name string) *toolenv.Tool {
	if i < 0 || i >= len(l.versions) {
		return nil
	}
	return l.versions[i][name]
}

// ToolsAt returns the tools of the i-th version, in order.
func (l *Lineage) ToolsAt(i int) []*toolenv.Tool {
	if i < 0 || i >= len(l.order) {
		return nil
	}
	return l.order[i]
}

// CollectionAt returns version v of the collection: its tools, with the
// current collection's name and the base's policy and backend. It is how
// old documentation is shown (toolenv eval --docs). It returns nil when v
// is not a version of the chain.
func (l *Lineage) CollectionAt(v string) *toolenv.Collection {
	i := l.Manifest.VersionIndex(v)
	if i < 0 {
		return nil
	}
	if i == len(l.order)-1 {
		return l.Current
	}
	tools := make([]*toolenv.Tool, len(l.order[i]))
	for j, t := range l.order[i] {
		tools[j] = t.Clone()
	}
	c := toolenv.NewCollection(l.Current.Name, l.Base.Kind, tools)
	c.Version, c.Description, c.Policy, c.Backend, c.Meta = v, l.Base.Description, l.Base.Policy, l.Base.Backend, l.Base.Meta
	return c
}

// stubOrigin returns, for a stub named name, the index of the version in
// which it was still a real tool (the From version of the step that left
// it) and its name there; -1 when name is not a stub of the chain.
func (l *Lineage) stubOrigin(name string) (int, string) {
	for i := len(l.Manifest.Steps) - 1; i >= 0; i-- {
		if tc := l.Manifest.Steps[i].stubOf(name); tc != nil {
			return i, tc.Tool
		}
	}
	return -1, ""
}

// backendConfig encodes a drifted collection's backend configuration.
func backendConfig(cfg BackendConfig) json.RawMessage {
	raw, _ := json.Marshal(cfg)
	return raw
}
