package probe

import (
	"context"
	"fmt"
	"os"
	"sort"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/internal/promptfile"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/index"
)

// FileVersion is the version of the probe file format.
const FileVersion = 1

// File is a probe run: its results per query and the documentation of
// every candidate tool, so that it can be reviewed without the index.
type File struct {
	Version int                      `json:"version"`
	Model   string                   `json:"model,omitempty"`
	Created time.Time                `json:"created"`
	Prompts []promptfile.Prompt      `json:"prompts,omitempty"`
	Tools   map[string]*toolenv.Tool `json:"tools"`
	Queries []*Result                `json:"queries"`
	// Structural are structural mappings among the candidates, shown
	// beside the model's in review.
	Structural []*mapping.Mapping `json:"structural,omitempty"`
	// Provenance says which toolenv made the file, and with which
	// command (the caller may add its configuration).
	Provenance *toolenv.Provenance `json:"provenance,omitempty"`
}

// NewFile gathers results into a file, with the documentation of their
// candidates (tool looks a tool up by ID) and the structural mappings
// among them (set may be nil).
func NewFile(model string, results []*Result, tool func(string) *toolenv.Tool, set *mapping.Set) *File {
	f := &File{Version: FileVersion, Model: model, Created: time.Now().UTC().Truncate(time.Second), Prompts: Prompts(), Tools: map[string]*toolenv.Tool{}, Queries: results,
		Provenance: buildinfo.Provenance(nil, map[string]any{"model": model})}
	seen := map[string]bool{}
	for _, r := range results {
		in := map[string]bool{}
		for _, id := range r.Candidates {
			in[id] = true
			if t := tool(id); t != nil {
				f.Tools[id] = t
			}
		}
		if set == nil {
			continue
		}
		for _, id := range r.Candidates {
			for _, m := range set.Alternatives(id) {
				if in[m.To] && !seen[m.Key()] {
					seen[m.Key()] = true
					f.Structural = append(f.Structural, m)
				}
			}
		}
	}
	sort.SliceStable(f.Structural, func(i, j int) bool { return f.Structural[i].Key() < f.Structural[j].Key() })
	return f
}

// Set returns the final mappings of every query (reflected where the
// reflection was read), one per tool pair and provenance.
func (f *File) Set() *mapping.Set {
	s := &mapping.Set{Version: mapping.SetVersion}
	seen := map[string]bool{}
	for _, r := range f.Queries {
		for _, m := range r.Final() {
			k := m.Key() + "\x00" + string(m.Provenance)
			if !seen[k] {
				seen[k] = true
				s.Add(m)
			}
		}
	}
	s.Sort()
	return s
}

// WriteFile writes f atomically.
func WriteFile(path string, f *File) error {
	if err := toolenv.WriteJSONFile(path, f); err != nil {
		return fmt.Errorf("write probe file: %w", err)
	}
	return nil
}

// ReadFile reads a probe file.
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read probe file: %w", err)
	}
	var f File
	if err := toolenv.DecodeJSON(data, &f); err != nil {
		return nil, fmt.Errorf("read probe file %s: not a probe file (toolenv map probe --out writes one): %w", path, err)
	}
	if f.Version != FileVersion {
		return nil, fmt.Errorf("read probe file %s: format version %d, this toolenv reads %d", path, f.Version, FileVersion)
	}
	for i, r := range f.Queries {
		if r == nil {
			return nil, fmt.Errorf("read probe file %s: query %d is null", path, i+1)
		}
		for _, ms := range [][]*mapping.Mapping{r.Initial, r.Reflected} {
			for _, m := range ms {
				if m == nil {
					return nil, fmt.Errorf("read probe file %s: query %s has a null mapping", path, r.Query.ID)
				}
			}
		}
	}
	for _, m := range f.Structural {
		if m == nil {
			return nil, fmt.Errorf("read probe file %s: a structural mapping is null", path)
		}
	}
	for id, t := range f.Tools {
		if t == nil {
			return nil, fmt.Errorf("read probe file %s: tool %s has no documentation", path, id)
		}
		if t.ID == "" {
			t.ID = id
		}
		if t.Input == nil {
			t.Input = toolenv.ObjectSchema()
		}
	}
	return &f, nil
}

// IndexRetriever retrieves with a tool index (hybrid search when it has
// vectors).
type IndexRetriever struct {
	Index *index.Index
	// Options adjust each search.
	Options index.SearchOptions
}

// Retrieve returns the top k tools for query.
func (r IndexRetriever) Retrieve(ctx context.Context, query string, k int) ([]*toolenv.Tool, error) {
	res, err := r.Index.Search(ctx, query, k, r.Options)
	if err != nil {
		return nil, err
	}
	out := make([]*toolenv.Tool, 0, len(res.Hits))
	for _, h := range res.Hits {
		if t := r.Index.Tool(h.ID); t != nil {
			out = append(out, t)
		}
	}
	return out, nil
}
