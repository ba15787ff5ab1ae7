// Package toolbenchtest generates adversarial ToolBench tool sets and
// StableToolBench cache folders for tests, and runs StableToolBench's own
// cache lookup (a Python standard-library script) on a cache folder.
//
// The tool sets have names that standardize oddly (punctuation, leading
// digits, Unicode, "_for_" inside names, Python keywords), names that
// collide once standardized (tools, APIs, parameters), fields missing
// from the documentation, and huge descriptions. The caches hold keys in
// Python's repr with arguments in any order, ints beside strings of the
// same digits, floats, Unicode that Python escapes, repeated keys in the
// client's JSON, documented (not standardized) parameter names, missing
// required arguments, answers holding NaN and Infinity, recorded errors,
// and files cut short. Every generated entry says what a StableToolBench
// client sends to reach it and what it must get back.
package toolbenchtest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolenv/toolenv/toolbench"
)

// Options bound what is generated; zero values take the defaults.
type Options struct {
	// Tools is how many tool documents to write (default 10).
	Tools int
	// MaxAPIs is the most APIs a tool documents (default 4).
	MaxAPIs int
	// MaxEntries is the most recorded calls per API (default 6).
	MaxEntries int
}

func (o Options) withDefaults() Options {
	if o.Tools <= 0 {
		o.Tools = 10
	}
	if o.MaxAPIs <= 0 {
		o.MaxAPIs = 4
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 6
	}
	return o
}

// Param is one documented parameter.
type Param struct {
	Name string // as documented
	Type string // ToolBench's type ("STRING", "NUMBER", "BOOLEAN", others, or "")
}

// API is one documented API.
type API struct {
	Category string // the category folder, as documented
	Tool     string // tool_name, as documented
	Name     string // the API's name, as documented
	Required []Param
	Optional []Param
}

// ClientNames are the names StableToolBench's client (rapidapi.py) sends
// for the API: the category as documented, the standardized tool name and
// the standardized API name.
func (a *API) ClientNames() (category, tool, api string) {
	return a.Category, toolbench.Standardize(a.Tool), toolbench.APIName(a.Name)
}

// ToolSet is a generated ToolBench tool tree.
type ToolSet struct {
	// Dir holds <Category>/<file>.json, ToolBench's tools layout.
	Dir  string
	APIs []*API
}

var (
	categories = []string{"Data", "Finance", "Business Software", "News, Media", "Video, Images", "eCommerce",
		"Artificial%20Intelligence%2FMachine%20Learning", "Sports"}
	toolNames = []string{"Weather API", "Weather-API", "weather api", "123 Movies", "__Hidden__", "Café Finder", "Caf Finder",
		"天气预报", "Emoji 🎉 Tool", "Tool/With/Slashes", "x", "A  B", "Search for Data", "Currency Converter (v2)",
		"id", "Ñandú", strings.Repeat("Very Long Tool Name ", 5)}
	apiNames = []string{"Get User", "get-user", "search", "Search for Weather API", "id", "from", "123 start", "Ñandú lookup",
		"/v1/items/{id}", "list_for_x", "ping", "東京 info", strings.Repeat("long api name ", 8), "Class", "true"}
	paramNames = []string{"q", "query", "id", "is_id", "from", "Symbol", "page-size", "2fa", "名前", "limit", "class", "x y",
		"length", "lang", "offset", "Ñ"}
	paramTypes = []string{"STRING", "STRING", "NUMBER", "NUMBER", "BOOLEAN", "ENUM", "ARRAY", "", "string", "OBJECT"}
)

// WriteToolSet writes a tool set under dir, drawn from rng.
func WriteToolSet(dir string, rng *rand.Rand, opts Options) (*ToolSet, error) {
	opts = opts.withDefaults()
	set := &ToolSet{Dir: dir}
	for i := 0; i < opts.Tools; i++ {
		cat := categories[rng.IntN(len(categories))]
		tool := toolNames[rng.IntN(len(toolNames))]
		doc := map[string]any{"tool_name": tool, "title": tool, "host": "example.p.rapidapi.com"}
		if rng.IntN(4) > 0 {
			doc["tool_description"] = description(rng)
		}
		var apis []any
		for j, n := 0, 1+rng.IntN(opts.MaxAPIs); j < n; j++ {
			a := &API{Category: cat, Tool: tool, Name: apiNames[rng.IntN(len(apiNames))]}
			if rng.IntN(8) == 0 {
				a.Name = "list_for_" + toolbench.Standardize(tool) // "_for_<tool>" inside the API's own name
			}
			api := map[string]any{"name": a.Name, "url": "https://example.p.rapidapi.com/" + fmt.Sprint(j)}
			if rng.IntN(3) > 0 {
				api["description"] = description(rng)
			}
			if rng.IntN(4) > 0 {
				api["method"] = []string{"GET", "POST"}[rng.IntN(2)]
			}
			req, opt := params(rng, &a.Required), params(rng, &a.Optional)
			if req != nil || rng.IntN(3) > 0 {
				api["required_parameters"] = nonNil(req)
			}
			if opt != nil || rng.IntN(3) > 0 {
				api["optional_parameters"] = nonNil(opt)
			}
			switch rng.IntN(4) {
			case 0:
				api["template_response"] = map[string]any{}
			case 1:
				api["template_response"] = map[string]any{"status": "str", "data": []any{map[string]any{"name": "str", "_list_length": 2}}}
			}
			apis = append(apis, api)
			set.APIs = append(set.APIs, a)
		}
		doc["api_list"] = apis
		path := filepath.Join(dir, cat, fmt.Sprintf("%s_%d.json", safeFileName(tool), i))
		if err := writeJSON(path, doc); err != nil {
			return nil, err
		}
	}
	return set, nil
}

func nonNil(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

// params draws zero to four parameters (sometimes sixty), some with
// fields missing.
func params(rng *rand.Rand, into *[]Param) []any {
	n := rng.IntN(5)
	if rng.IntN(25) == 0 {
		n = 60
	}
	var out []any
	for k := 0; k < n; k++ {
		p := Param{Name: paramNames[rng.IntN(len(paramNames))], Type: paramTypes[rng.IntN(len(paramTypes))]}
		if n == 60 {
			p.Name = fmt.Sprintf("%s_%d", p.Name, k)
		}
		doc := map[string]any{"name": p.Name}
		if p.Type != "" || rng.IntN(2) == 0 {
			doc["type"] = p.Type
		}
		if rng.IntN(3) > 0 {
			doc["description"] = description(rng)
		}
		switch rng.IntN(4) {
		case 0:
			doc["default"] = ""
		case 1:
			doc["default"] = 5
		case 2:
			doc["default"] = "en"
		}
		*into = append(*into, p)
		out = append(out, doc)
	}
	return out
}

// description is empty, short, Unicode, or huge.
func description(rng *rand.Rand) string {
	switch rng.IntN(5) {
	case 0:
		return ""
	case 1:
		return "Returns data. Ünïcödé, 中文, emoji 🎉, quotes ' \" and a backslash \\."
	case 2:
		return strings.Repeat("A very long description that goes on. ", 120)
	}
	return "Get the thing."
}

// safeFileName keeps a tool file name to one path element.
func safeFileName(s string) string {
	s = toolbench.Standardize(s)
	if s == "" {
		return "tool"
	}
	return s
}

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
