package toolbenchgen

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/toolbench"
)

// shape measures the distributions the generator imitates.
func shape(docs []toolbench.APIDoc) map[string][]float64 {
	seen := map[string]bool{}
	m := map[string][]float64{}
	perTool := map[string]int{}
	add := func(k string, v int) { m[k] = append(m[k], float64(v)) }
	templates, objects := 0, 0
	for i := range docs {
		d := &docs[i]
		if seen[d.Key()] {
			continue
		}
		seen[d.Key()] = true
		perTool[d.CategoryName+"\x00"+d.ToolName]++
		add("tool name", len(d.ToolName))
		add("api name", len(d.APIName))
		add("api description", len(d.APIDescription))
		add("required", len(d.RequiredParameters))
		add("optional", len(d.OptionalParameters))
		for _, p := range append(append([]toolbench.ParamDoc(nil), d.RequiredParameters...), d.OptionalParameters...) {
			add("param name", len(p.Name))
			add("param description", len(p.Description))
			if s, ok := p.Default.(string); ok {
				add("example", len(s))
			} else {
				b, _ := json.Marshal(p.Default)
				add("example", len(b))
			}
		}
		t := d.TemplateResponse
		if len(t) > 0 && string(t) != "null" {
			templates++
			if t[0] == '{' {
				objects++
			}
			add("template", dumpsLen(t))
		}
	}
	for _, n := range perTool {
		add("apis per tool", n)
	}
	// How often parameters and whole inputs repeat: what sharing saves.
	params, names, distinct, inputs := 0, map[string]bool{}, map[string]bool{}, map[string]bool{}
	emptyDesc, emptyDefault := 0, 0
	seen = map[string]bool{}
	for i := range docs {
		d := &docs[i]
		if seen[d.Key()] {
			continue
		}
		seen[d.Key()] = true
		in := ""
		for _, p := range append(append([]toolbench.ParamDoc(nil), d.RequiredParameters...), d.OptionalParameters...) {
			params++
			names[p.Name] = true
			b, _ := json.Marshal([]any{p.Name, p.Type, p.Description, p.Default})
			distinct[string(b)] = true
			in += string(b)
			if p.Description == "" {
				emptyDesc++
			}
			if p.Default == "" {
				emptyDefault++
			}
		}
		inputs[in+"|"+strconv.Itoa(len(d.RequiredParameters))] = true
	}
	m["parameters per API"] = []float64{float64(params) / float64(len(seen))}
	m["distinct parameter names per parameter"] = []float64{float64(len(names)) / float64(params)}
	m["distinct parameters per parameter"] = []float64{float64(len(distinct)) / float64(params)}
	m["distinct inputs per API"] = []float64{float64(len(inputs)) / float64(len(seen))}
	m["share of empty parameter descriptions"] = []float64{float64(emptyDesc) / float64(params)}
	m["share of empty examples"] = []float64{float64(emptyDefault) / float64(params)}
	m["share with a template"] = []float64{float64(templates) / float64(len(seen))}
	m["share of object templates"] = []float64{float64(objects) / float64(len(seen))}
	return m
}

func quantile(xs []float64, p float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[min(int(p*float64(len(s))), len(s)-1)]
}

// TestShapeMatchesStableToolBench generates a set and compares its
// distributions with StableToolBench's test APIs: quartiles and p90 of
// every length and count within 25 % (or 3 units); the template shares,
// the shares of empty descriptions and examples, the mean parameter count
// and how often parameters and inputs repeat within 10 % (or 5 points).
func TestShapeMatchesStableToolBench(t *testing.T) {
	dir := shareddata.Require(t, "stabletoolbench", "solvable_queries", "test_instruction")
	src, err := toolbench.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	real := shape(src.Docs)
	gen := shape(Docs(Options{APIs: 20000, Seed: 1}))
	// How often names repeat depends on the number of APIs: those shares
	// are compared on a set as large as StableToolBench's.
	same := shape(Docs(Options{APIs: len(real["api name"]), Seed: 1}))
	for k, rv := range real {
		gv := gen[k]
		if strings.HasPrefix(k, "distinct") {
			gv = same[k]
		}
		if len(rv) == 1 {
			t.Logf("%-24s real %.3f generated %.3f", k, rv[0], gv[0])
			if math.Abs(rv[0]-gv[0]) > max(0.05, 0.1*rv[0]) {
				t.Errorf("%s: real %.3f, generated %.3f", k, rv[0], gv[0])
			}
			continue
		}
		for _, p := range []float64{.25, .5, .75, .9} {
			r, g := quantile(rv, p), quantile(gv, p)
			t.Logf("%-24s p%02.0f real %6.0f generated %6.0f", k, p*100, r, g)
			if math.Abs(r-g) > max(3, 0.25*r) {
				t.Errorf("%s p%.0f: real %.0f, generated %.0f", k, p*100, r, g)
			}
		}
	}
}

// dumpsLen is the length of Python's json.dumps of a JSON value (", " and
// ": " between items, as StableToolBench measures).
func dumpsLen(raw []byte) int {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return len(raw)
	}
	b, _ := json.Marshal(v)
	n, in, esc := len(b), false, false
	for _, c := range b {
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && (c == ',' || c == ':'):
			n++
		}
	}
	return n
}
