package fidelity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/store"
)

// Origins of real answers. Store entries of other origins (simulator,
// synthesizer) are not real answers and are never scored against.
const (
	OriginUpstream = "upstream"      // recorded from the real API by toolenv
	OriginImport   = "import"        // imported from another cache (StableToolBench's)
	OriginPairs    = "pairs"         // a --pairs file
	OriginDoc      = "documentation" // a tool's documented example
)

// Pair is one recorded request and the real API's answer to it.
type Pair struct {
	// Tool is the tool ID (collection/name).
	Tool string `json:"tool"`
	// Args are the call's arguments.
	Args map[string]any `json:"args"`
	// Response is the real response payload; Error its error message.
	Response json.RawMessage `json:"response,omitempty"`
	Error    string          `json:"error,omitempty"`
	// Status is the real call's status (ok when empty).
	Status toolenv.Status `json:"status,omitempty"`
	// Origin says where the pair comes from.
	Origin string `json:"origin"`
}

// canon is the canonical JSON of the arguments (the cache key's).
func (p *Pair) canon() string {
	c, err := toolenv.Canonical(p.Args)
	if err != nil {
		return "{}"
	}
	return string(c)
}

func (p *Pair) status() toolenv.Status {
	if p.Status == "" {
		return toolenv.StatusOK
	}
	return p.Status
}

// StorePairs returns the store's real answers (origin upstream or
// import), in the store's order (tool, then arguments).
func StorePairs(ctx context.Context, st store.Store) ([]*Pair, error) {
	var out []*Pair
	err := st.Each(ctx, func(e *store.Entry) error {
		if e.Origin != OriginUpstream && e.Origin != OriginImport {
			return nil
		}
		var args map[string]any
		if err := toolenv.DecodeJSON([]byte(e.Args), &args); err != nil {
			return nil // not arguments toolenv wrote; nothing to replay
		}
		if args == nil {
			args = map[string]any{}
		}
		out = append(out, &Pair{Tool: e.Tool, Args: args, Response: e.Body, Error: e.Error, Status: e.Status, Origin: e.Origin})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the store's recorded answers: %w", err)
	}
	return out, nil
}

// DocPairs returns the documented examples of tools that show a response
// or an error, as pairs.
func DocPairs(tools []*toolenv.Tool) []*Pair {
	var out []*Pair
	for _, t := range tools {
		for _, ex := range t.Examples {
			if len(ex.Response) == 0 && ex.Error == "" {
				continue
			}
			args := ex.Args
			if args == nil {
				args = map[string]any{}
			}
			p := &Pair{Tool: t.ID, Args: args, Response: ex.Response, Error: ex.Error, Origin: OriginDoc}
			if ex.Error != "" && emptyBody(ex.Response) {
				p.Status = toolenv.StatusUpstreamError
			}
			out = append(out, p)
		}
	}
	return out
}

// emptyBody reports whether a payload holds nothing: no bytes, "" or
// null.
func emptyBody(raw json.RawMessage) bool {
	b := strings.TrimSpace(string(raw))
	return b == "" || b == `""` || b == "null"
}

// filePair is a line of a pairs file.
type filePair struct {
	Tool     string          `json:"tool"`
	Args     json.RawMessage `json:"args"`
	Response json.RawMessage `json:"response"`
	Error    string          `json:"error"`
	Status   toolenv.Status  `json:"status"`
}

// maxPairLine bounds one line of a pairs file.
const maxPairLine = 64 << 20

// ReadPairs reads a JSONL file of {"tool", "args", "response"} objects
// ("error" and "status" optional). args is an object, or a string
// holding one (a StableToolBench tool_input). A line that is not a pair
// is skipped and reported in problems.
func ReadPairs(path string) (pairs []*Pair, problems []error, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read pairs: %w", err)
	}
	defer f.Close()
	vals, problems, err := toolenv.ReadJSONLines(f, path, "a {\"tool\", \"args\", \"response\"} object", maxPairLine, func(fp *filePair) error {
		if fp.Tool == "" {
			return errors.New(`no "tool"`)
		}
		if emptyBody(fp.Response) && fp.Error == "" {
			return errors.New(`no "response" (nor "error")`)
		}
		return nil
	})
	if err != nil {
		return nil, problems, fmt.Errorf("read pairs %s: %w", path, err)
	}
	for _, v := range vals {
		args, aerr := decodeArgs(v.Args)
		if aerr != nil {
			problems = append(problems, fmt.Errorf("%s: pair of %s skipped: %w", path, v.Tool, aerr))
			continue
		}
		pairs = append(pairs, &Pair{Tool: v.Tool, Args: args, Response: v.Response, Error: v.Error, Status: v.Status, Origin: OriginPairs})
	}
	return pairs, problems, nil
}

func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return map[string]any{}, nil
	}
	if s[0] == '"' {
		var inner string
		if err := json.Unmarshal(raw, &inner); err != nil {
			return nil, fmt.Errorf("args: %w", err)
		}
		s = strings.TrimSpace(inner)
		if s == "" {
			return map[string]any{}, nil
		}
	}
	var args map[string]any
	if err := toolenv.DecodeJSON([]byte(s), &args); err != nil {
		return nil, fmt.Errorf("args is not a JSON object: %w", err)
	}
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

// Resolver finds a loaded tool by ID. *invoke.Registry implements it.
type Resolver interface {
	Tool(id string) *toolenv.Tool
}

// Resolve keeps the pairs whose tool is loaded, rewriting a bare tool
// name (or a name another collection does not share) to its ID, and
// keeps only the tools of only (when non-empty: IDs or bare names). It
// reports how many pairs of each unknown tool were dropped.
func Resolve(pairs []*Pair, r Resolver, colls []*toolenv.Collection, only []string) (kept []*Pair, unknown map[string]int) {
	byName := map[string][]string{}
	for _, c := range colls {
		for _, t := range c.Tools {
			byName[t.Name] = append(byName[t.Name], t.ID)
		}
	}
	want := map[string]bool{}
	for _, o := range only {
		want[o] = true
	}
	unknown = map[string]int{}
	for _, p := range pairs {
		id := p.Tool
		if r.Tool(id) == nil {
			if ids := byName[id]; len(ids) == 1 {
				id = ids[0]
			} else {
				unknown[p.Tool]++
				continue
			}
		}
		if len(want) > 0 {
			_, name, _ := toolenv.SplitToolID(id)
			if !want[id] && !want[name] {
				continue
			}
		}
		cp := *p
		cp.Tool = id
		kept = append(kept, &cp)
	}
	return kept, unknown
}

// Sample keeps at most n pairs of each tool (n <= 0 keeps all), chosen
// with a generator seeded by seed and the tool ID, so the choice of one
// tool does not depend on the others. The kept pairs stay in their
// order.
func Sample(pairs []*Pair, n int, seed int64) []*Pair {
	if n <= 0 {
		return pairs
	}
	byTool := map[string][]int{}
	for i, p := range pairs {
		byTool[p.Tool] = append(byTool[p.Tool], i)
	}
	var keep []int
	for _, tool := range slices.Sorted(maps.Keys(byTool)) {
		idx := byTool[tool]
		if len(idx) > n {
			// Shuffle in the order of the pairs' arguments, so the sample
			// does not depend on how the inputs were ordered.
			sort.SliceStable(idx, func(a, b int) bool { return pairs[idx[a]].canon() < pairs[idx[b]].canon() })
			h := fnv.New64a()
			h.Write([]byte(tool))
			rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
			rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
			idx = idx[:n]
		}
		keep = append(keep, idx...)
	}
	sort.Ints(keep)
	out := make([]*Pair, len(keep))
	for i, k := range keep {
		out[i] = pairs[k]
	}
	return out
}
