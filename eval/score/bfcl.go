package score

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/internal/progress"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// BFCLCase is one test entry to check.
type BFCLCase struct {
	ID       string `json:"id"`
	Category string `json:"category"`
	// Mutation is the fixture's name for how the output was made, if
	// the record has one (reports break agreement down by it).
	Mutation string `json:"mutation,omitempty"`
	Funcs    []metrics.BFCLFunction
	Answers  []any
	Output   any
	// FromBFCL says the possible answers are BFCL's own; otherwise they
	// are the gold call's values only.
	FromBFCL bool
	// TypesFromDocs says the types are BFCL's function descriptions';
	// otherwise they are read from the answers.
	TypesFromDocs bool
	// ExpectAST and ExpectOrdered are the verdicts the record says BFCL
	// gave (bfcl_ast, bfcl_ordered), if it says.
	ExpectAST, ExpectOrdered string
}

const bfclHint = `a BFCL record is {"id", "category", "tools" or BFCL's "function", "gold" or BFCL's "ground_truth", "model_output"} with model_output the decoded calls [{name: {param: value}}] or null`

var bfclIndex = regexp.MustCompile(`_\d+(-\d+)*$`)

// ReadBFCL reads the cases of a file: a JSON array or JSON Lines of
// records, each with
//
//   - "id", and "category" (BFCL's test category; without it, the id's
//     part before "_<number>", as in "parallel_multiple_12");
//   - the functions: "tools" [{"name", "properties", "required"}] (types
//     then read from the answers), or BFCL's own "function" list;
//   - the possible answers: "gold" [{"name", "arguments"}] (each value
//     then the only one accepted), or BFCL's "ground_truth";
//   - "model_output": the output as BFCL's decoder gives it, or null when
//     it could not be decoded;
//   - optionally the verdicts BFCL gave, "bfcl_ast" and "bfcl_ordered",
//     to compare with.
//
// functions and answers, when not "", are BFCL's question and
// possible_answer files (JSON Lines of {"id", "function"} and {"id",
// "ground_truth"}): a record without its own takes the entry with its id
// (or the part of its id before the first '/').
func ReadBFCL(path, functions, answers string) ([]BFCLCase, error) {
	_, recs, err := readFile(path)
	if err != nil {
		return nil, err
	}
	join := func(file, field string) (map[string]any, error) {
		if file == "" {
			return nil, nil
		}
		_, rs, err := readFile(file)
		if err != nil {
			return nil, err
		}
		m := map[string]any{}
		for _, r := range rs {
			id, ok, err := r.str(file, "id")
			if err != nil {
				return nil, err
			}
			v, has := r.v.Get(field)
			if !ok || !has {
				return nil, badInput(file, r.where, fmt.Sprintf(`each entry is {"id", %q}`, field), "no \"id\" or %q", field)
			}
			m[id] = v
		}
		return m, nil
	}
	funcsByID, err := join(functions, "function")
	if err != nil {
		return nil, err
	}
	answersByID, err := join(answers, "ground_truth")
	if err != nil {
		return nil, err
	}
	lookup := func(m map[string]any, id string) (any, bool) {
		if v, ok := m[id]; ok {
			return v, true
		}
		base, _, _ := strings.Cut(id, "/")
		v, ok := m[base]
		return v, ok
	}
	out := make([]BFCLCase, 0, len(recs))
	for _, r := range recs {
		c, err := bfclCase(path, r, func(id string) (any, any) {
			f, _ := lookup(funcsByID, id)
			a, _ := lookup(answersByID, id)
			return f, a
		})
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, badInput(path, "", bfclHint, "no records")
	}
	return out, nil
}

func bfclCase(path string, r record, joined func(id string) (any, any)) (BFCLCase, error) {
	var c BFCLCase
	var err error
	fail := func(format string, args ...any) (BFCLCase, error) {
		where := r.where
		if c.ID != "" {
			where += " (" + c.ID + ")"
		}
		return c, badInput(path, where, bfclHint, format, args...)
	}
	if c.ID, _, err = r.str(path, "id"); err != nil {
		return c, err
	}
	if c.Category, _, err = r.str(path, "category"); err != nil {
		return c, err
	}
	if c.Category == "" {
		c.Category = bfclIndex.ReplaceAllString(strings.SplitN(c.ID, "/", 2)[0], "")
	}
	if c.Category == "" {
		return fail(`no "category" and no id to take it from`)
	}
	c.Mutation, _, _ = r.str(path, "mutation")
	if c.ExpectAST, _, err = r.str(path, "bfcl_ast"); err != nil {
		return c, err
	}
	if c.ExpectOrdered, _, err = r.str(path, "bfcl_ordered"); err != nil {
		return c, err
	}
	out, ok := r.v.Get("model_output")
	if !ok {
		return fail(`no "model_output" (null when the output could not be decoded)`)
	}
	c.Output = out
	jf, ja := joined(c.ID)

	// Possible answers.
	if gt, _, ok := r.field("ground_truth", "possible_answer"); ok {
		ja = gt
	}
	var tools []metrics.BFCLTool
	if tv, ok := r.v.Get("tools"); ok {
		if tools, err = readTools(tv); err != nil {
			return fail("tools: %v", err)
		}
	}
	if ja != nil {
		list, ok := ja.([]any)
		if !ok {
			return fail("the possible answers must be a list of {function: {parameter: [values]}}, not %s", jsonKind(ja))
		}
		c.Answers, c.FromBFCL = list, true
	} else if gold, ok := r.v.Get("gold"); ok {
		var funcs []metrics.BFCLFunction
		if funcs, c.Answers, err = metrics.BFCLFromGold(tools, gold); err != nil {
			return fail("gold: %v", err)
		}
		c.Funcs = funcs
	} else {
		return fail(`no "gold" and no "ground_truth"`)
	}

	// Function descriptions.
	if fv, ok := r.v.Get("function"); ok {
		jf = fv
	}
	switch {
	case jf != nil:
		if c.Funcs, err = metrics.BFCLFunctionsFromDocs(jf); err != nil {
			return fail("function: %v", err)
		}
		c.TypesFromDocs = true
	case c.Funcs == nil:
		if tools == nil {
			return fail(`no "tools" and no "function"`)
		}
		if c.Funcs, err = metrics.BFCLFunctionsFromAnswers(tools, c.Answers); err != nil {
			return fail("%v", err)
		}
	}
	return c, nil
}

func readTools(v any) ([]metrics.BFCLTool, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("a list of {\"name\", \"properties\", \"required\"}, not %s", jsonKind(v))
	}
	strs := func(x any, what string) ([]string, error) {
		if x == nil {
			return nil, nil
		}
		l, ok := x.([]any)
		if !ok {
			return nil, fmt.Errorf("%s must be a list of names", what)
		}
		out := make([]string, len(l))
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s must be a list of names", what)
			}
			out[i] = s
		}
		return out, nil
	}
	tools := make([]metrics.BFCLTool, len(list))
	for i, t := range list {
		d, ok := t.(pyfmt.Dict)
		if !ok {
			return nil, fmt.Errorf("tool %d must be an object", i+1)
		}
		n, _ := d.Get("name")
		name, ok := n.(string)
		if !ok {
			return nil, fmt.Errorf("tool %d has no name", i+1)
		}
		p, _ := d.Get("properties")
		props, err := strs(p, name+": properties")
		if err != nil {
			return nil, err
		}
		q, _ := d.Get("required")
		req, err := strs(q, name+": required")
		if err != nil {
			return nil, err
		}
		tools[i] = metrics.BFCLTool{Name: name, Properties: props, Required: req}
	}
	return tools, nil
}

// BFCLReport is what ScoreBFCL found.
type BFCLReport struct {
	Metric string `json:"metric"`
	Input  string `json:"input"`
	Cases  int    `json:"cases"`
	// AnswersFromBFCL counts the cases whose possible answers were
	// BFCL's; the others had only their gold call's values.
	AnswersFromBFCL int `json:"answers_from_bfcl"`
	// TypesFromDocs counts the cases with BFCL's function descriptions.
	TypesFromDocs int `json:"types_from_docs"`
	// AST is the leaderboard's check (any order for parallel
	// categories), Ordered the call-by-call one.
	AST     BFCLMode         `json:"ast"`
	Ordered BFCLMode         `json:"ordered"`
	PerCase []BFCLCaseResult `json:"per_case"`
}

// BFCLMode is one mode's summary.
type BFCLMode struct {
	// Valid counts the valid verdicts; Accuracy is their share.
	Valid    int     `json:"valid"`
	Accuracy float64 `json:"accuracy"`
	// Verdicts counts the verdicts, by name.
	Verdicts map[string]int `json:"verdicts"`
	// ByCategory is the accuracy per test category.
	ByCategory map[string]Fraction `json:"by_category"`
	// Agreement compares with the verdicts the records carry, if any.
	Agreement *Agreement `json:"agreement,omitempty"`
}

// Fraction is a count out of a total.
type Fraction struct {
	N     int `json:"n"`
	Total int `json:"total"`
}

// Agreement counts verdicts equal to the expected ones, overall and by
// the records' mutation names.
type Agreement struct {
	Equal      int                 `json:"equal"`
	Total      int                 `json:"total"`
	ByMutation map[string]Fraction `json:"by_mutation,omitempty"`
}

// BFCLCaseResult is one case's verdicts.
type BFCLCaseResult struct {
	ID            string   `json:"id"`
	Category      string   `json:"category"`
	AST           string   `json:"ast"`
	Ordered       string   `json:"ordered"`
	ExpectAST     string   `json:"expect_ast,omitempty"`
	ExpectOrdered string   `json:"expect_ordered,omitempty"`
	Errors        []string `json:"errors,omitempty"`
}

// ScoreBFCL checks every case in both modes. A case BFCL's own checker
// would fail on is an error naming it. Progress goes to w (nil: nowhere).
func ScoreBFCL(ctx context.Context, input string, cases []BFCLCase, opt metrics.BFCLOptions, w io.Writer) (*BFCLReport, error) {
	bar := progress.New(w, len(cases), "bfcl")
	defer bar.Finish()
	rep := &BFCLReport{Metric: "bfcl", Input: input, Cases: len(cases)}
	modes := []*BFCLMode{&rep.AST, &rep.Ordered}
	for _, m := range modes {
		m.Verdicts = map[string]int{}
		m.ByCategory = map[string]Fraction{}
	}
	for _, c := range cases {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if c.FromBFCL {
			rep.AnswersFromBFCL++
		}
		if c.TypesFromDocs {
			rep.TypesFromDocs++
		}
		cr := BFCLCaseResult{ID: c.ID, Category: c.Category, ExpectAST: c.ExpectAST, ExpectOrdered: c.ExpectOrdered}
		for k, m := range modes {
			o := opt
			o.Ordered = k == 1
			res, err := metrics.BFCLCheck(c.Category, c.Funcs, c.Output, c.Answers, o)
			if err != nil {
				return nil, badInput(input, "case "+c.ID, bfclHint, "%v", err)
			}
			v := res.Verdict()
			m.Verdicts[v]++
			f := m.ByCategory[c.Category]
			f.Total++
			if res.Valid {
				m.Valid++
				f.N++
			}
			m.ByCategory[c.Category] = f
			expect := c.ExpectAST
			if k == 0 {
				cr.AST, cr.Errors = v, res.Errors
			} else {
				cr.Ordered = v
				expect = c.ExpectOrdered
			}
			if expect != "" {
				if m.Agreement == nil {
					m.Agreement = &Agreement{ByMutation: map[string]Fraction{}}
				}
				m.Agreement.Total++
				mf := m.Agreement.ByMutation[c.Mutation]
				mf.Total++
				if v == expect {
					m.Agreement.Equal++
					mf.N++
				}
				if c.Mutation != "" {
					m.Agreement.ByMutation[c.Mutation] = mf
				}
			}
		}
		rep.PerCase = append(rep.PerCase, cr)
		bar.Add(1)
	}
	for _, m := range modes {
		if len(cases) > 0 {
			m.Accuracy = float64(m.Valid) / float64(len(cases))
		}
		if m.Agreement != nil && len(m.Agreement.ByMutation) == 0 {
			m.Agreement.ByMutation = nil
		}
	}
	return rep, nil
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
