package metrics

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/internal/shareddata"
)

// bfclCase is one case of ../shared/fixtures/reference-metrics/bfcl/
// cases.json.
type bfclCase struct {
	ID, Category, Mutation string
	Tools                  []BFCLTool
	Gold, Output           any
	AST, Ordered           string
}

func readBFCLFixture(t testing.TB) []bfclCase {
	t.Helper()
	p := shareddata.RequireFixture(t, "reference-metrics", "bfcl", "cases.json")
	raw, err := os.ReadFile(filepath.Clean(p))
	if err != nil {
		t.Fatal(err)
	}
	v, err := pyfmt.Loads(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	var out []bfclCase
	for _, x := range v.([]any) {
		d := x.(pyfmt.Dict)
		get := func(k string) any { v, _ := d.Get(k); return v }
		c := bfclCase{ID: get("id").(string), Category: get("category").(string), Mutation: get("mutation").(string),
			Gold: get("gold"), Output: get("model_output"), AST: get("bfcl_ast").(string), Ordered: get("bfcl_ordered").(string)}
		for _, tv := range get("tools").([]any) {
			td := tv.(pyfmt.Dict)
			var tool BFCLTool
			n, _ := td.Get("name")
			tool.Name = n.(string)
			props, _ := td.Get("properties")
			for _, p := range props.([]any) {
				tool.Properties = append(tool.Properties, p.(string))
			}
			req, _ := td.Get("required")
			for _, r := range req.([]any) {
				tool.Required = append(tool.Required, r.(string))
			}
			c.Tools = append(c.Tools, tool)
		}
		out = append(out, c)
	}
	return out
}

// bfclStructural are the verdicts that do not depend on which values a
// parameter accepts: reading the output, counting calls, naming the
// function, the required parameters. A checker given only the gold call
// must agree with BFCL on them exactly.
var bfclStructural = map[string]bool{
	BFCLDecoderFailed: true, BFCLWrongOutputFormat: true, BFCLSimpleWrongCount: true, BFCLMultipleWrongCount: true,
	BFCLNoOrderWrongCount: true, BFCLEnforceOrderWrongCnt: true, BFCLWrongFuncName: true, BFCLMissingRequired: true,
}

// explainedByAnswers reports whether a verdict that differs from BFCL's is
// one only BFCL's possible answers (or typed descriptions) could decide:
// neither side structural, and ours the stricter one, since the gold call
// accepts a subset of what BFCL's answers list (BFCL valid, or failing a
// later check of a call, or matching in another order).
func explainedByAnswers(ours, bfcl string) bool {
	return !bfclStructural[ours] && !bfclStructural[bfcl] && ours != BFCLValid
}

// bfclNeedsAnswers lists the fixture's mutations made by giving a value
// only BFCL's possible answers list: another accepted value
// (alt_allowed), an optional parameter with a listed value
// (add_optional_allowed). Every other mutation must agree exactly, but
// for an optional parameter the gold call leaves out (optionalLeftOut).
var bfclNeedsAnswers = map[string]bool{"alt_allowed": true, "add_optional_allowed": true}

// optionalLeftOut reports whether the verdict is an unexpected parameter
// that the tool declares and the gold call leaves out: BFCL's possible
// answers usually list such a parameter ("" and its values), so BFCL goes
// on to check its value where the gold call alone cannot.
func optionalLeftOut(r BFCLResult, c bfclCase) bool {
	if r.ErrorType != BFCLUnexpectedParam || len(r.Errors) == 0 {
		return false
	}
	for _, t := range c.Tools {
		for _, p := range t.Properties {
			if strings.Contains(r.Errors[0], pyfmt.ReprString(p)) {
				return true
			}
		}
	}
	return false
}

// excused reports whether a verdict may differ from BFCL's.
func excused(r BFCLResult, bfcl string, c bfclCase) bool {
	return explainedByAnswers(r.Verdict(), bfcl) && (bfclNeedsAnswers[c.Mutation] || optionalLeftOut(r, c))
}

// TestBFCLMatchesReference runs BFCL's checker on the cases of the
// fixture, with the possible answers and types the gold call implies
// (BFCLFromGold), in both modes, and compares each verdict with BFCL's
// own: equal, except for the cases made with a value only BFCL's answers
// list, and there never more lenient than BFCL. The agreement per
// mutation is logged (docs/eval.md gives it for this fixture).
func TestBFCLMatchesReference(t *testing.T) {
	cases := readBFCLFixture(t)
	type tally struct{ n, ast, ordered int }
	per := map[string]*tally{}
	total := tally{}
	for _, c := range cases {
		funcs, answers, err := BFCLFromGold(c.Tools, c.Gold)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		ast, err := BFCLCheck(c.Category, funcs, c.Output, answers, BFCLOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		ord, err := BFCLCheck(c.Category, funcs, c.Output, answers, BFCLOptions{Ordered: true})
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		k := per[c.Mutation]
		if k == nil {
			k = &tally{}
			per[c.Mutation] = k
		}
		k.n++
		total.n++
		okAST, okOrd := ast.Verdict() == c.AST, ord.Verdict() == c.Ordered
		if okAST {
			k.ast++
			total.ast++
		}
		if okOrd {
			k.ordered++
			total.ordered++
		}
		if !(okAST || excused(ast, c.AST, c)) || !(okOrd || excused(ord, c.Ordered, c)) {
			t.Errorf("%s: ast %s (BFCL %s), ordered %s (BFCL %s)", c.ID, ast.Verdict(), c.AST, ord.Verdict(), c.Ordered)
		}
	}
	var names []string
	for m := range per {
		names = append(names, m)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, m := range names {
		k := per[m]
		fmt.Fprintf(&b, "\n  %-50s %4d cases: ast %4d, ordered %4d", m, k.n, k.ast, k.ordered)
	}
	t.Logf("verdicts equal to BFCL's: ast %d of %d, ordered %d of %d%s", total.ast, total.n, total.ordered, total.n, b.String())
}

// TestBFCLPossibleAnswers runs the checker on entries written in BFCL's
// own format (typed function descriptions, possible answers listing every
// accepted value), one rule of ast_checker.py per row.
func TestBFCLPossibleAnswers(t *testing.T) {
	const docs = `[
	 {"name": "geo.find", "parameters": {"type": "dict", "properties": {
	   "origin": {"type": "string"}, "unit": {"type": "string"}, "km": {"type": "float"}, "n": {"type": "integer"},
	   "budget": {"type": "dict"}, "tags": {"type": "array", "items": {"type": "string"}},
	   "ids": {"type": "array", "items": {"type": "integer"}}, "rows": {"type": "array", "items": {"type": "dict"}}},
	   "required": ["origin"]}},
	 {"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}]`
	// One expected call of geo.find; the answers list what BFCL accepts.
	const geo = `[{"geo.find": {"origin": ["New York City", "NYC"], "unit": ["", "miles"], "km": [5.0],
	   "n": ["", 3], "budget": ["", {"min": [100], "max": [200, ""]}], "tags": ["", ["a b", "c"]],
	   "ids": ["", [1, 2]], "rows": ["", [{"k": ["v"]}]]}}]`
	// Two expected calls of f, in either order.
	const two = `[{"f": {"x": [1]}}, {"f": {"x": [2]}}]`
	load := func(s string) any {
		v, err := pyfmt.Loads(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return v
	}
	funcs, err := BFCLFunctionsFromDocs(load(docs))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, category, answers, output string
		opt                             BFCLOptions
		want                            string
	}{
		{"another listed value, normalised", "simple", geo, `[{"geo.find": {"origin": " nyc.", "km": 5.0}}]`, BFCLOptions{}, BFCLValid},
		{"a value not listed", "simple", geo, `[{"geo.find": {"origin": "Boston", "km": 5.0}}]`, BFCLOptions{}, BFCLValueErrorString},
		{"optional listed with a value", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0, "unit": "MILES"}}]`, BFCLOptions{}, BFCLValid},
		{"optional with a value not listed", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0, "unit": "km"}}]`, BFCLOptions{}, BFCLValueErrorString},
		{"an int for a float", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5}}]`, BFCLOptions{}, BFCLValid},
		{"a float for an int", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0, "n": 3.0}}]`, BFCLOptions{}, BFCLTypeErrorSimple},
		{"a bool for an int", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0, "n": true}}]`, BFCLOptions{}, BFCLTypeErrorSimple},
		{"a string for an int", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0, "n": "3"}}]`, BFCLOptions{}, BFCLTypeErrorSimple},
		{"missing a parameter without a blank", "simple", geo, `[{"geo.find": {"origin": "NYC"}}]`, BFCLOptions{}, BFCLMissingOptional},
		{"missing a required one first", "simple", geo, `[{"geo.find": {"km": 5.0, "zzz": 1}}]`, BFCLOptions{}, BFCLMissingRequired},
		{"an unknown parameter", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0, "zzz": 1}}]`, BFCLOptions{}, BFCLUnexpectedParam},
		{"a dict as listed", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0, "budget": {"min": 100, "max": 200}}}]`, BFCLOptions{}, BFCLValid},
		{"a dict without an optional key", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0, "budget": {"min": 100}}}]`, BFCLOptions{}, BFCLValid},
		{"a dict with a wrong value", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0, "budget": {"min": 1, "max": 200}}}]`, BFCLOptions{}, BFCLValueErrorDictValue},
		{"a dict written as its answer", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0, "budget": {"min": [100]}}}]`, BFCLOptions{}, BFCLValueErrorDictValue},
		{"a dict with an unknown key", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0, "budget": {"min": 100, "x": 1}}}]`, BFCLOptions{}, BFCLValueErrorDictKey},
		{"a dict missing a key: reported over a wrong value", "simple", `[{"geo.find": {"origin": ["NYC"], "km": [5.0], "budget": [{"min": [100], "max": [200]}]}}]`,
			`[{"geo.find": {"origin": "NYC", "km": 5.0, "budget": {"min": 1}}}]`, BFCLOptions{}, BFCLValueErrorDictKey},
		{"a list, strings normalised", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0, "tags": ["A_B", "c"]}}]`, BFCLOptions{}, BFCLValid},
		{"a list in another order", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0, "tags": ["c", "a b"]}}]`, BFCLOptions{}, BFCLValueErrorList},
		// "" among the answers lets the nested type check pass; the
		// value check then fails.
		{"a list of the wrong item type", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0, "ids": ["1", 2]}}]`, BFCLOptions{}, BFCLValueErrorList},
		{"a list of dicts", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0, "rows": [{"k": "V"}]}}]`, BFCLOptions{}, BFCLValid},
		{"a list of dicts too long", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0, "rows": [{"k": "v"}, {"k": "v"}]}}]`, BFCLOptions{}, BFCLValueErrorListDictCnt},
		{"not decoded", "simple", geo, `null`, BFCLOptions{}, BFCLDecoderFailed},
		{"two calls in one item", "simple", geo, `[{"geo.find": {"origin": "NYC"}, "f": {"x": 1}}]`, BFCLOptions{}, BFCLWrongOutputFormat},
		{"arguments not an object", "simple", geo, `[{"geo.find": "NYC"}]`, BFCLOptions{}, BFCLWrongOutputFormat},
		{"format before count", "simple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0}}, "x"]`, BFCLOptions{}, BFCLWrongOutputFormat},
		{"no call", "simple", geo, `[]`, BFCLOptions{}, BFCLSimpleWrongCount},
		{"another function", "multiple", geo, `[{"f": {"x": 1}}]`, BFCLOptions{}, BFCLWrongFuncName},
		{"multiple, two calls", "multiple", geo, `[{"geo.find": {"origin": "NYC", "km": 5.0}}, {"f": {"x": 1}}]`, BFCLOptions{}, BFCLMultipleWrongCount},
		{"underscored name", "simple", geo, `[{"geo_find": {"origin": "NYC", "km": 5.0}}]`, BFCLOptions{UnderscoreNames: true}, BFCLValid},
		{"underscored name not expected", "simple", geo, `[{"geo_find": {"origin": "NYC", "km": 5.0}}]`, BFCLOptions{}, BFCLWrongFuncName},
		{"parallel in any order", "parallel", two, `[{"f": {"x": 2}}, {"f": {"x": 1}}]`, BFCLOptions{}, BFCLValid},
		{"parallel, checked in order", "parallel", two, `[{"f": {"x": 2}}, {"f": {"x": 1}}]`, BFCLOptions{Ordered: true}, BFCLValueErrorOthers},
		{"parallel, no match", "parallel_multiple", two, `[{"f": {"x": 3}}, {"f": {"x": 1}}]`, BFCLOptions{}, BFCLNoOrderNoMatch},
		{"parallel, one call short", "parallel", two, `[{"f": {"x": 1}}]`, BFCLOptions{}, BFCLNoOrderWrongCount},
		{"in order, one call short", "parallel", two, `[{"f": {"x": 1}}]`, BFCLOptions{Ordered: true}, BFCLEnforceOrderWrongCnt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out any
			if tt.output != "null" {
				out = load(tt.output)
			}
			r, err := BFCLCheck(tt.category, funcs, out, load(tt.answers).([]any), tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict() != tt.want {
				t.Errorf("verdict %s, want %s (%v)", r.Verdict(), tt.want, r.Errors)
			}
		})
	}
	// A nested type is checked when the answers have no blank.
	nested := `[{"geo.find": {"origin": ["NYC"], "km": [5.0], "ids": [[1, 2]]}}]`
	r, err := BFCLCheck("simple", funcs, load(`[{"geo.find": {"origin": "NYC", "km": 5.0, "ids": ["1", 2]}}]`), load(nested).([]any), BFCLOptions{})
	if err != nil || r.Verdict() != BFCLTypeErrorNested {
		t.Errorf("nested type: %s, %v", r.Verdict(), err)
	}
	// A variable: a parameter whose answers are of another type than its
	// description is compared as written.
	variable := `[{"geo.find": {"origin": ["NYC"], "km": ["dist"]}}]`
	for out, want := range map[string]string{`"dist"`: BFCLValid, `"other"`: BFCLValueErrorOthers} {
		r, err := BFCLCheck("simple", funcs, load(`[{"geo.find": {"origin": "NYC", "km": `+out+`}}]`), load(variable).([]any), BFCLOptions{})
		if err != nil || r.Verdict() != want {
			t.Errorf("variable %s: %s, want %s (%v)", out, r.Verdict(), want, err)
		}
	}
}

// TestBFCLInputErrors: inputs BFCL's own checker would fail on are
// errors that say what is wrong, never a panic or a verdict.
func TestBFCLInputErrors(t *testing.T) {
	funcs := []BFCLFunction{{Name: "f", Params: map[string]BFCLParam{"x": {Type: "number"}, "y": {Type: "array"}}}}
	load := func(s string) any { v, _ := pyfmt.Loads(s); return v }
	tests := []struct{ answers, output, want string }{
		{`[{"f": {"x": [1]}}]`, `[{"f": {"x": 1}}]`, `type "number"`},
		{`[{"f": {"y": [[1]]}}]`, `[{"f": {"y": [1]}}]`, "items type"},
		{`[{"g": {"x": [1]}}]`, `[{"g": {"x": 1}}]`, `no function description for "g"`},
		{`["f"]`, `[{"f": {}}]`, "must be an object"},
		{`[{"f": [1]}]`, `[{"f": {}}]`, "map parameters to lists"},
	}
	for _, tt := range tests {
		_, err := BFCLCheck("multiple", funcs, load(tt.output), load(tt.answers).([]any), BFCLOptions{})
		var ie *BFCLInputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("answers %s output %s: %v, want %q", tt.answers, tt.output, err, tt.want)
		}
	}
}

func TestBFCLStandardize(t *testing.T) {
	for in, want := range map[string]string{
		"New York, NY":  "newyorkny",
		"April 1, 2024": "april12024",
		"it's_a-B*C^D":  `it"sabcd`,
		"İSTANBUL":      "i\u0307stanbul",
		"ΟΔΟΣ ΣΑ":       "οδοσσα", // the spaces go first, so no Σ is final
		"ΑΣ1":           "ας1",
		"ΑΣ\u0301":      "ας\u0301",
		"Σ":             "σ",
		"ΑΣ.":           "ας",
	} {
		if got := BFCLStandardize(in); got != want {
			t.Errorf("BFCLStandardize(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBFCLStandardizeKeepsLoneSurrogates: Python keeps a lone surrogate
// in a str, so standardize_string keeps two strings that differ only in
// one apart; so does BFCLStandardize on the strings pyfmt.Loads makes.
func TestBFCLStandardizeKeepsLoneSurrogates(t *testing.T) {
	load := func(lit string) string {
		v, err := pyfmt.Loads(lit)
		if err != nil {
			t.Fatal(err)
		}
		return v.(string)
	}
	a, b := load(`"A \ud800"`), load(`"A \ud801"`)
	if a == b {
		t.Fatal("pyfmt.Loads made one string of two lone surrogates")
	}
	sa, sb := BFCLStandardize(a), BFCLStandardize(b)
	if sa == sb {
		t.Errorf("BFCLStandardize(%q) = BFCLStandardize(%q) = %q: Python keeps them apart", a, b, sa)
	}
	if want := "a" + a[2:]; sa != want {
		t.Errorf("BFCLStandardize(%q) = %q, want %q", a, sa, want)
	}
}

// FuzzBFCL: any function descriptions, possible answers and output are
// checked or refused with a *BFCLInputError, never a panic; a verdict is
// one of BFCLVerdicts.
func FuzzBFCL(f *testing.F) {
	f.Add("parallel", `[{"name": "f", "parameters": {"properties": {"x": {"type": "integer"}, "d": {"type": "dict"}, "l": {"type": "array", "items": {"type": "dict"}}}, "required": ["x"]}}]`,
		`[{"f": {"x": [1, ""], "d": ["", {"a": [1]}], "l": [[{"k": ["v"]}]]}}]`, `[{"f": {"x": 1, "d": {"a": 1}, "l": [{"k": "v"}]}}]`)
	f.Add("simple", `[{"name": "f", "parameters": {"properties": {"s": {"type": "string"}}}}]`, `[{"f": {"s": ["a", "b"]}}]`, `[{"f": {"s": "A"}}]`)
	f.Add("multiple", `[]`, `[]`, `null`)
	f.Fuzz(func(t *testing.T, category, docs, answers, output string) {
		dv, err := pyfmt.Loads(docs)
		if err != nil {
			return
		}
		funcs, err := BFCLFunctionsFromDocs(dv)
		if err != nil {
			return
		}
		av, err := pyfmt.Loads(answers)
		if err != nil {
			return
		}
		al, ok := av.([]any)
		if !ok {
			return
		}
		ov, err := pyfmt.Loads(output)
		if err != nil {
			return
		}
		for _, ordered := range []bool{false, true} {
			r, err := BFCLCheck(category, funcs, ov, al, BFCLOptions{Ordered: ordered})
			if err != nil {
				var ie *BFCLInputError
				if !errors.As(err, &ie) {
					t.Fatalf("undocumented error %T: %v", err, err)
				}
				continue
			}
			known := false
			for _, v := range BFCLVerdicts {
				known = known || v == r.Verdict()
			}
			if !known {
				t.Fatalf("unknown verdict %q", r.Verdict())
			}
		}
	})
}

// TestBFCLAttempt checks toolenv direct attempts with BFCL's checker: the
// tools' JSON Schema types, the gold call's values, the attempt as BFCL's
// decoder would give it.
func TestBFCLAttempt(t *testing.T) {
	in := toolenv.ObjectSchema()
	in.Properties["city"] = &toolenv.Schema{Type: "string"}
	in.Properties["days"] = &toolenv.Schema{Type: "integer"}
	in.Properties["km"] = &toolenv.Schema{Type: "number"}
	in.Properties["tags"] = &toolenv.Schema{Type: "array", Items: &toolenv.Schema{Type: "string"}}
	in.Required = []string{"city"}
	tools := []*toolenv.Tool{{Name: "forecast", Input: in}, {Name: "other", Input: toolenv.ObjectSchema()}}
	n := func(s string) json.Number { return json.Number(s) }
	gold := []toolenv.GoldCall{{Name: "forecast", Args: map[string]any{"city": "New York", "days": n("3"), "km": n("2.5"), "tags": []any{"a"}}, Label: "F"}}
	call := func(args map[string]any) []toolenv.GoldCall {
		return []toolenv.GoldCall{{Name: "forecast", Args: args}}
	}
	tests := []struct {
		name string
		a    Attempt
		want string
	}{
		{"normalised string", Attempt{Parsed: true, Calls: call(map[string]any{"city": "new_york", "days": n("3"), "km": n("2.5"), "tags": []any{"A"}})}, BFCLValid},
		{"float for an integer", Attempt{Parsed: true, Calls: call(map[string]any{"city": "New York", "days": n("3.0"), "km": n("2.5"), "tags": []any{"a"}})}, BFCLTypeErrorSimple},
		{"int for a number", Attempt{Parsed: true, Calls: call(map[string]any{"city": "New York", "days": n("3"), "km": n("2"), "tags": []any{"a"}})}, BFCLValueErrorOthers},
		{"nothing parsed", Attempt{}, BFCLDecoderFailed},
		{"a malformed item", Attempt{Parsed: true, Calls: call(map[string]any{"city": "New York"}), Malformed: 1}, BFCLWrongOutputFormat},
		{"another tool", Attempt{Parsed: true, Calls: []toolenv.GoldCall{{Name: "other"}}}, BFCLWrongFuncName},
		{"two calls", Attempt{Parsed: true, Calls: append(call(nil), call(nil)...)}, BFCLEnforceOrderWrongCnt},
	}
	for _, tt := range tests {
		r, err := BFCLAttempt(tools, gold, tt.a)
		if err != nil || r.Verdict() != tt.want {
			t.Errorf("%s: %s, %v; want %s", tt.name, r.Verdict(), err, tt.want)
		}
	}
}
