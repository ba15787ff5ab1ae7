package toolbench

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/validate"
)

// Index resolves StableToolBench requests (category, tool_name, api_name)
// to tools, with the server's own normalisation. It is read-only after
// NewIndex and safe for concurrent use.
type Index struct {
	exact  map[[3]string]*toolenv.Tool // std category, std tool, api
	byTool map[[2]string]*toolenv.Tool // std tool, api; the first category's
	// more holds, for the few (std tool, api) in several categories, the
	// tools of every category: most APIs are in one, and keep no list.
	more map[[2]string][]*toolenv.Tool

	// toolAPI (std tool → its api names, sorted) gives hints when a
	// request names no tool; it is made from exact on the first miss.
	toolAPIOnce sync.Once
	toolAPI     map[string][]string
}

// NewIndex indexes the tools of collections by the names a
// StableToolBench client sends. ToolBench tools carry their standardized
// names in Meta; any other tool is addressed with its Category (or its
// collection's name) as category, its Group (or the collection's name) as
// tool_name and its Title or Name as api_name, so every collection can be
// called through /virtual.
func NewIndex(collections ...*toolenv.Collection) *Index {
	n := 0
	for _, c := range collections {
		n += len(c.Tools)
	}
	ix := &Index{exact: make(map[[3]string]*toolenv.Tool, n), byTool: make(map[[2]string]*toolenv.Tool, n), more: map[[2]string][]*toolenv.Tool{}}
	add := func(cat, tool, api string, t *toolenv.Tool) {
		k := [3]string{cat, tool, api}
		if _, dup := ix.exact[k]; dup {
			return
		}
		ix.exact[k] = t
		ta := [2]string{tool, api}
		first, ok := ix.byTool[ta]
		switch {
		case !ok:
			ix.byTool[ta] = t
		case ix.more[ta] == nil:
			ix.more[ta] = []*toolenv.Tool{first, t}
		default:
			ix.more[ta] = append(ix.more[ta], t)
		}
	}
	for _, c := range collections {
		for _, t := range c.Tools {
			cat, tool, api := t.Meta["std_category"], t.Meta["std_tool"], t.Meta["api_name"]
			if tool != "" && api != "" {
				add(cat, tool, api, t)
				// StableToolBench's server cuts the API name at its first
				// "_for_<tool>" (and so names its cache file): the cut
				// name reaches the API too.
				if cut, _, found := strings.Cut(api, "_for_"+tool); found && cut != "" {
					add(cat, tool, cut, t)
				}
				continue
			}
			cat = StandardizeCategory(cmp.Or(t.Category, c.Name))
			tool = Standardize(cmp.Or(t.Group, c.Name))
			add(cat, tool, APIName(t.TitleOrName()), t)
			add(cat, tool, APIName(t.Name), t)
		}
	}
	return ix
}

// apisByTool returns the API names of each standardized tool, sorted.
func (ix *Index) apisByTool() map[string][]string {
	ix.toolAPIOnce.Do(func() {
		ix.toolAPI = map[string][]string{}
		for ta := range ix.byTool {
			ix.toolAPI[ta[0]] = append(ix.toolAPI[ta[0]], ta[1])
		}
		for k := range ix.toolAPI {
			sort.Strings(ix.toolAPI[k])
		}
	})
	return ix.toolAPI
}

// Len returns the number of indexed APIs.
func (ix *Index) Len() int { return len(ix.exact) }

// Names is how StableToolBench's server normalises a request's names.
type Names struct {
	Category string // standardized category
	Tool     string // standardized tool name (without "_for_<category>")
	API      string // standardized API name (without "_for_<tool>")
}

// Normalize applies StableToolBench's prepare_tool_name_and_url: the
// category is standardized; a tool name ending in "_for_<category>" loses
// that suffix; the API name is standardized and loses a "_for_<tool>"
// suffix (clients sometimes send the whole function name).
func Normalize(category, tool, api string) Names {
	cat := StandardizeCategory(category)
	t := tool
	if strings.HasSuffix(t, "_for_"+cat) {
		t = strings.TrimSuffix(t, "_for_"+cat)
	}
	t = Standardize(t)
	a := APIName(api)
	if i := strings.Index(a, "_for_"+tool); i >= 0 && tool != "" {
		a = a[:i]
	} else if i := strings.Index(a, "_for_"+t); i >= 0 && t != "" {
		a = a[:i]
	}
	return Names{Category: cat, Tool: t, API: a}
}

// Resolve finds the tool a StableToolBench request names. When the exact
// category does not match but the tool and API are unambiguous elsewhere
// it resolves anyway (clients mix "Finance" and "Financial"). On failure
// it returns an error that says what is close.
func (ix *Index) Resolve(category, tool, api string) (*toolenv.Tool, error) {
	n := Normalize(category, tool, api)
	if t, ok := ix.exact[[3]string{n.Category, n.Tool, n.API}]; ok {
		return t, nil
	}
	ta := [2]string{n.Tool, n.API}
	switch ts := ix.more[ta]; {
	case len(ts) == 0:
		if t, ok := ix.byTool[ta]; ok {
			return t, nil
		}
	default:
		cats := make([]string, len(ts))
		for i, t := range ts {
			cats[i] = cmp.Or(t.Meta["std_category"], t.Category, t.Collection)
		}
		sort.Strings(cats)
		return nil, toolenv.Errorw(toolenv.StatusUnknownTool, "send one of these as category: "+strings.Join(cats, ", "),
			"tool %q has the API %q in %d categories, and %q (standardized from %q) is none of them", n.Tool, n.API, len(ts), n.Category, category)
	}
	toolAPI := ix.apisByTool()
	apis, ok := toolAPI[n.Tool]
	if !ok {
		tools := make([]string, 0, len(toolAPI))
		for k := range toolAPI {
			tools = append(tools, k)
		}
		hint := ""
		if s := validate.Suggest(n.Tool, tools); s != "" {
			hint = fmt.Sprintf("; did you mean tool %q?", s)
		}
		return nil, toolenv.Errorw(toolenv.StatusUnknownTool, "check tool_name against the tool documentation loaded with --toolbench",
			"no tool %q (standardized from %q) is loaded%s", n.Tool, tool, hint)
	}
	hint := fmt.Sprintf("tool %s has the APIs %s", n.Tool, strings.Join(apis, ", "))
	if s := validate.Suggest(n.API, apis); s != "" {
		hint = fmt.Sprintf("did you mean %q? ", s) + hint
	}
	return nil, toolenv.Errorw(toolenv.StatusUnknownTool, hint, "tool %q has no API %q (standardized from %q)", n.Tool, n.API, api)
}
