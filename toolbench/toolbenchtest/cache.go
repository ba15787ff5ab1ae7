package toolbenchtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/toolbench"
)

// Entry is one recorded call of a generated StableToolBench cache: the
// /virtual request a StableToolBench client sends to reach it, its key,
// and the answer it must get.
type Entry struct {
	API *API
	// Category, ToolName and APIName are the names the client sends
	// (API.ClientNames); ToolInput is the arguments' JSON text as the
	// model wrote it (key order, spacing, escapes, repeated keys).
	Category, ToolName, APIName, ToolInput string
	// Key is str(json.loads(ToolInput)) as Python writes it: the entry's
	// key in its file.
	Key string
	// File is the cache file, relative to the cache folder.
	File string
	// Error and Response are the recorded answer: Response is JSON text
	// as Python's json.dump wrote it (NaN and Infinity included).
	Error    string
	Response string
	// Want is Response as toolenv serves it: NaN and the infinities as
	// null.
	Want json.RawMessage
	// NonFinite says Response holds NaN or an infinity.
	NonFinite bool
	// InCutFile says the entry's file was cut short after it:
	// StableToolBench cannot read the file; toolenv imports the entries
	// before the cut.
	InCutFile bool
	// Lost says the entry is where its file was cut: it cannot be
	// imported, and the import must report it.
	Lost bool
	// NaNKey says the key holds nan (the model sent NaN): JSON arguments
	// cannot reach it, and the import must report it.
	NaNKey bool
	// NaNInput says ToolInput holds NaN (json.loads reads it; JSON, and so
	// toolenv's /virtual, does not), though a repeated name may have
	// replaced it in the key.
	NaNInput bool
}

// Imported says cache import must import the entry.
func (e *Entry) Imported() bool { return !e.Lost && !e.NaNKey }

// Reachable says a toolenv server must answer the entry's request with
// its answer once the cache is imported.
func (e *Entry) Reachable() bool { return e.Imported() && !e.NaNInput }

// WriteCache writes a StableToolBench cache for set under dir and returns
// its entries, file by file.
func WriteCache(dir string, set *ToolSet, rng *rand.Rand, opts Options) ([]*Entry, error) {
	opts = opts.withDefaults()
	// APIs whose client names lead to one file share it, as they share it
	// in StableToolBench.
	byFile := map[string][]*API{}
	var files []string
	for _, a := range set.APIs {
		cat, tool, api := a.ClientNames()
		c, t, f := toolbench.CachePath(cat, tool, api)
		p := filepath.Join(c, t, f)
		if byFile[p] == nil {
			files = append(files, p)
		}
		byFile[p] = append(byFile[p], a)
	}
	sort.Strings(files)
	var all []*Entry
	for _, file := range files {
		apis := byFile[file]
		g := &entryGen{rng: rng, keys: map[string]bool{}}
		var entries []*Entry
		for n := 1 + rng.IntN(opts.MaxEntries); len(entries) < n; {
			a := apis[rng.IntN(len(apis))]
			before := len(entries)
			entries = append(entries, g.entries(a)...)
			if len(entries) == before {
				if g.tries++; g.tries > 50 {
					break // every draw's key is taken: the API has few arguments
				}
			}
		}
		cut := rng.IntN(10) == 0 && len(entries) > 1
		for _, e := range entries {
			e.File = file
			e.InCutFile = cut
		}
		if cut {
			entries[len(entries)-1].Lost = true
		}
		if err := writeCacheFile(filepath.Join(dir, file), entries, cut); err != nil {
			return nil, err
		}
		all = append(all, entries...)
	}
	return all, nil
}

// entryGen draws the entries of one file, keeping their keys distinct
// (a file is one Python dict).
type entryGen struct {
	rng   *rand.Rand
	keys  map[string]bool
	tries int
}

// entries draws one recorded call of a, or a group of calls that must
// stay apart: the same arguments in another order, or an int beside the
// string of its digits, each with its own answer.
func (g *entryGen) entries(a *API) []*Entry {
	rng := g.rng
	members := g.args(a)
	var variants [][]member
	switch rng.IntN(6) {
	case 0: // the same arguments in another order
		other := append([]member(nil), members...)
		for try := 0; try < 20 && same(other, members); try++ {
			rng.Shuffle(len(other), func(i, j int) { other[i], other[j] = other[j], other[i] })
		}
		if !same(other, members) { // not when every name is one
			variants = append(variants, members, other)
		}
	case 1: // an int and the string of its digits
		m := member{name: "length", value: fmt.Sprint(rng.IntN(1000))}
		variants = append(variants, append(append([]member(nil), members...), m),
			append(append([]member(nil), members...), member{name: m.name, value: jsonString(m.value)}))
	}
	if variants == nil {
		variants = [][]member{members}
	}
	var out []*Entry
	for _, v := range variants {
		e := g.entry(a, v)
		if e == nil {
			continue
		}
		out = append(out, e)
	}
	return out
}

func same(a, b []member) bool {
	for i := range a {
		if a[i].name != b[i].name {
			return false
		}
	}
	return true
}

// member is one argument as the model wrote it: its name and its value's
// JSON text.
type member struct{ name, value string }

// args draws a call's arguments: documented parameters under their
// standardized names (what the function JSON shows the model), sometimes
// under their documented names, sometimes with a required one missing,
// an undocumented one added, or a name repeated.
func (g *entryGen) args(a *API) []member {
	rng := g.rng
	documented := rng.IntN(6) == 0
	var out []member
	add := func(p Param, skip bool) {
		if skip {
			return
		}
		name := toolbench.ParamName(p.Name)
		if name == "" {
			name = "is_"
		}
		if documented {
			name = p.Name
		}
		out = append(out, member{name: name, value: g.value(p.Type)})
	}
	for _, p := range a.Required {
		add(p, rng.IntN(8) == 0) // a required argument left out
	}
	for _, p := range a.Optional {
		add(p, rng.IntN(2) == 0)
	}
	if rng.IntN(6) == 0 {
		out = append(out, member{name: "undocumented", value: g.value("STRING")})
	}
	if len(out) > 0 && rng.IntN(10) == 0 {
		out = append(out, member{name: out[0].name, value: g.value("STRING")}) // repeated: json.loads keeps the last
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// value draws a value's JSON text for a parameter of ToolBench type typ.
func (g *entryGen) value(typ string) string {
	rng := g.rng
	switch typ {
	case "NUMBER":
		switch rng.IntN(8) {
		case 0:
			return jsonString(fmt.Sprint(rng.IntN(100))) // a number sent as a string
		case 1:
			return "12345678901234567890"
		case 2:
			return []string{"1.0", "1e5", "2.50", "1E-7", "-0", "-0.0", "1e16", "0.1"}[rng.IntN(8)]
		}
		return fmt.Sprint(rng.IntN(2000) - 1000)
	case "BOOLEAN":
		return []string{"true", "false", `"true"`, `"False"`}[rng.IntN(4)]
	case "ARRAY":
		return `["a", 1, null, {"k": [true, 2.5]}]`
	case "OBJECT":
		return `{"z": 1, "a": {"é": "ü"}}`
	}
	if rng.IntN(40) == 0 {
		return "NaN" // json.loads reads it; str() writes nan
	}
	pool := []string{"Paris", "O'Brien", `say "hi"`, `both ' and "`, "back\\slash", "tab\there", "new\nline",
		"Zürich", "東京", "emoji 🎉", "nbsp\u00a0x", "rtl\u200fmark", "line\u2028sep", "combining e\u0301",
		"ctrl\u0001", "", " ", "#tag", "50%", "a+b", "None", "{'not': 'a dict'}", "\x7f", "\U0001F600\U0001F601"}
	return jsonString(pool[rng.IntN(len(pool))])
}

// jsonString writes s as a JSON string, with non-ASCII escaped or not.
func jsonString(s string) string {
	if len(s)%2 == 0 {
		return pyfmt.JSONString(s) // ensure_ascii, as json.dumps writes it
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimRight(b.String(), "\n")
}

// entry builds the entry for one argument list, or nil when its key is
// taken in the file.
func (g *entryGen) entry(a *API, members []member) *Entry {
	rng := g.rng
	var in strings.Builder
	sep, colon := ", ", ": "
	if rng.IntN(2) == 0 {
		sep, colon = ",", ":"
	}
	in.WriteString("{")
	for i, m := range members {
		if i > 0 {
			in.WriteString(sep)
		}
		in.WriteString(jsonString(m.name) + colon + m.value)
	}
	in.WriteString("}")
	toolInput := in.String()
	if len(members) == 0 && rng.IntN(2) == 0 {
		toolInput = "" // StableToolBench reads "" as {}
	}
	key, nanKey, err := pythonKey(toolInput)
	if err != nil {
		panic(fmt.Sprintf("toolbenchtest: generated tool_input %q: %v", toolInput, err))
	}
	if g.keys[key] {
		return nil
	}
	g.keys[key] = true
	cat, tool, api := a.ClientNames()
	e := &Entry{API: a, Category: cat, ToolName: tool, APIName: api, ToolInput: toolInput, Key: key, NaNKey: nanKey,
		NaNInput: strings.Contains(toolInput, ":NaN") || strings.Contains(toolInput, ": NaN")}
	e.Error, e.Response, e.Want, e.NonFinite = answer(rng, key)
	return e
}

// pythonKey is str(json.loads(toolInput)), "" read as {}; nan says the
// value held NaN (written nan).
func pythonKey(toolInput string) (key string, nan bool, err error) {
	if toolInput == "" {
		return "{}", false, nil
	}
	if strings.Contains(toolInput, "NaN") {
		// Only as a whole value: the generator writes NaN nowhere else
		// outside strings. json.loads reads it as a float nan.
		plain := strings.ReplaceAll(toolInput, ": NaN", ": \"\\u0000NaN\"")
		plain = strings.ReplaceAll(plain, ":NaN", ":\"\\u0000NaN\"")
		k, err := pyfmt.ReprJSON([]byte(plain))
		if err != nil {
			return "", false, err
		}
		return strings.ReplaceAll(k, `'\x00NaN'`, "nan"), strings.Contains(k, `'\x00NaN'`), nil
	}
	k, err := pyfmt.ReprJSON([]byte(toolInput))
	return k, false, err
}

// answer draws a recorded answer: text (often a Python literal, as
// StableToolBench stores str() of an API's JSON), an object or a list
// (sometimes with NaN or an infinity), or an error.
func answer(rng *rand.Rand, key string) (errMsg, response string, want json.RawMessage, nonFinite bool) {
	tag := jsonString(key) // every answer names its key, so that two answers never coincide
	switch rng.IntN(6) {
	case 0:
		return "", jsonString("{'result': 'ok', 'for': " + key + "}"), json.RawMessage(jsonString("{'result': 'ok', 'for': " + key + "}")), false
	case 1:
		resp := fmt.Sprintf(`{"price": NaN, "high": Infinity, "low": -Infinity, "key": %s}`, tag)
		return "", resp, json.RawMessage(fmt.Sprintf(`{"price": null, "high": null, "low": null, "key": %s}`, tag)), true
	case 2:
		resp := fmt.Sprintf(`[1.5, "Zürich 東京 🎉", {"nested": [null, true]}, %s]`, tag)
		return "", resp, json.RawMessage(resp), false
	case 3:
		return "Message error...", jsonString("recorded failure for " + key), json.RawMessage(jsonString("recorded failure for " + key)), false
	}
	resp := fmt.Sprintf(`{"data": {"items": [{"name": "a"}], "count": 1}, "key": %s}`, tag)
	return "", resp, json.RawMessage(resp), false
}

// writeCacheFile writes entries as Python's json.dump(cache, f, indent=4)
// writes a dict (ensure_ascii, NaN and Infinity as is); cut writes the
// file only up to the middle of the last entry.
func writeCacheFile(path string, entries []*Entry, cut bool) error {
	var b strings.Builder
	b.WriteString("{")
	var cutAt int
	for i, e := range entries {
		if i > 0 {
			b.WriteString(",")
		}
		if i == len(entries)-1 {
			cutAt = b.Len()
		}
		fmt.Fprintf(&b, "\n    %s: {\n        \"error\": %s,\n        \"response\": %s\n    }", pyfmt.JSONString(e.Key), pyfmt.JSONString(e.Error), indentJSON(e.Response))
	}
	b.WriteString("\n}")
	text := b.String()
	if cut {
		text = text[:cutAt+(b.Len()-cutAt)/2]
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

// indentJSON lays a value out one level deeper, as json.dump(indent=4)
// does inside the entry (only the layout: the text stays as given).
func indentJSON(s string) string { return strings.ReplaceAll(s, "\n", "\n        ") }
