package score

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
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
	// Underscore says the model was sent function names with '.'
	// written '_' (BFCL's underscore_to_dot), so the checker expects them
	// so.
	Underscore bool
	// Decoded says the output was decoded here from a result file's raw
	// "result" (Format says how); DecodeError is why BFCL's decoder fails
	// on it, if it does.
	Decoded     bool   `json:"-"`
	DecodeError string `json:"-"`
}

// BFCLUnscored is a case that has no verdict, and why: a record toolenv
// cannot read, a function description or possible answer BFCL's own
// checker would fail on, an output whose decoding toolenv does not
// reproduce.
type BFCLUnscored struct {
	ID string `json:"id,omitempty"`
	// Where is the record's place in its file ("line 7").
	Where string `json:"where,omitempty"`
	// Mode is "ast", "ordered" or "" (both).
	Mode   string `json:"mode,omitempty"`
	Reason string `json:"reason"`
}

// BFCLReadOptions say how to read a file of BFCL cases.
type BFCLReadOptions struct {
	// Functions and Answers are BFCL's question and possible_answer
	// files, joined by id ("" for none).
	Functions, Answers string
	// Format is how a record's raw "result" (BFCL's result files) is
	// decoded: BFCLFormatPython, BFCLFormatFC, or "" to take it from
	// Model.
	Format string
	// Model is the model's name as the leaderboard writes it (a result
	// folder's name); "" takes the name of the file's folder.
	Model string
	// Underscore, when not nil, says whether function names were sent
	// with '.' written '_'; nil takes it from Model.
	Underscore *bool
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
	cases, unscored, err := ReadBFCLFile(path, BFCLReadOptions{Functions: functions, Answers: answers})
	if err == nil && len(unscored) > 0 {
		u := unscored[0]
		return nil, badInput(path, u.Where, bfclHint, "%s", u.Reason)
	}
	return cases, err
}

// ReadBFCLFile reads the cases of a file as ReadBFCL does, and BFCL's
// result files as released: a record {"id", "result"} holds the model's
// raw output, decoded here as BFCL's handlers decode it (DecodeBFCL; the
// format from opt, else from the model's name, else from the folder the
// file is in, as BFCL's result/<model>/ layout names it). A record that
// cannot be scored is returned among the unscored with its reason, and
// the others are scored; a file that is not JSON, or of which no record
// can be read, is an error.
func ReadBFCLFile(path string, opt BFCLReadOptions) ([]BFCLCase, []BFCLUnscored, error) {
	functions, answers := opt.Functions, opt.Answers
	_, recs, err := readFile(path)
	if err != nil {
		return nil, nil, err
	}
	model := opt.Model
	if model == "" {
		model = filepath.Base(filepath.Dir(path))
	}
	format, underscore := BFCLModelFamily(model)
	if opt.Format != "" {
		format = opt.Format
	}
	if opt.Underscore != nil {
		underscore = *opt.Underscore
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
		return nil, nil, err
	}
	answersByID, err := join(answers, "ground_truth")
	if err != nil {
		return nil, nil, err
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
	var unscored []BFCLUnscored
	for _, r := range recs {
		c, err := bfclCase(path, r, format, func(id string) (any, any) {
			f, _ := lookup(funcsByID, id)
			a, _ := lookup(answersByID, id)
			return f, a
		})
		if err != nil {
			reason := strings.TrimPrefix(reasonOf(err), path+": ")
			reason = strings.TrimPrefix(strings.TrimPrefix(reason, r.where+" ("+c.ID+"): "), r.where+": ")
			unscored = append(unscored, BFCLUnscored{ID: c.ID, Where: r.where, Reason: reason})
			continue
		}
		c.Underscore = c.Decoded && underscore
		out = append(out, c)
	}
	if len(out) == 0 {
		if len(unscored) > 0 {
			u := unscored[0]
			where := u.Where
			if u.ID != "" {
				where += " (" + u.ID + ")"
			}
			return nil, unscored, badInput(path, where, bfclHint, "no record could be scored (the first: %s)", u.Reason)
		}
		return nil, nil, badInput(path, "", bfclHint, "no records")
	}
	return out, unscored, nil
}

// reasonOf is an error's message without the file's path before it.
func reasonOf(err error) string {
	var te *toolenv.Error
	if errors.As(err, &te) {
		return te.Message
	}
	return err.Error()
}

func bfclCase(path string, r record, format string, joined func(id string) (any, any)) (BFCLCase, error) {
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
		raw, isRaw := r.v.Get("result")
		if !isRaw {
			return fail(`no "model_output" (null when the output could not be decoded) and no raw "result" (BFCL's result files)`)
		}
		c.Decoded = true
		dec, err := DecodeBFCL(raw, format)
		var de *BFCLDecodeError
		switch {
		case errors.As(err, &de):
			out, c.DecodeError = nil, de.Msg
		case err != nil:
			return fail("result: %v", err)
		default:
			out = dec
		}
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
	// Unscored lists the cases (or a case's mode) with no verdict, and
	// why; every other case is scored.
	Unscored []BFCLUnscored `json:"unscored,omitempty"`
	// Decoded counts the cases whose raw output was decoded here.
	Decoded int `json:"decoded,omitempty"`
}

// BFCLMode is one mode's summary.
type BFCLMode struct {
	// Valid counts the valid verdicts; Accuracy is their share of the
	// Scored cases (all of them unless some are unscored).
	Valid    int     `json:"valid"`
	Scored   int     `json:"scored"`
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
	// DecodeError is why BFCL's decoder fails on the raw output.
	DecodeError string `json:"decode_error,omitempty"`
}

// ScoreBFCL checks every case in both modes. A case (or one mode of it)
// BFCL's own checker would fail on gets no verdict there and is listed in
// the report's Unscored with the reason; the others are scored. Progress
// goes to w (nil: nowhere).
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
		if c.Decoded {
			rep.Decoded++
		}
		cr := BFCLCaseResult{ID: c.ID, Category: c.Category, ExpectAST: c.ExpectAST, ExpectOrdered: c.ExpectOrdered, DecodeError: c.DecodeError}
		for k, m := range modes {
			o := opt
			o.Ordered = k == 1
			o.UnderscoreNames = o.UnderscoreNames || c.Underscore
			res, err := metrics.BFCLCheck(c.Category, c.Funcs, c.Output, c.Answers, o)
			if err != nil {
				mode := []string{"ast", "ordered"}[k]
				rep.Unscored = append(rep.Unscored, BFCLUnscored{ID: c.ID, Mode: mode, Reason: err.Error()})
				if k == 0 {
					cr.AST = "unscored"
				} else {
					cr.Ordered = "unscored"
				}
				continue
			}
			m.Scored++
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
		if m.Scored > 0 {
			m.Accuracy = float64(m.Valid) / float64(m.Scored)
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

// ScoreBFCLFile reads a file of cases (ReadBFCLFile) and scores them
// (ScoreBFCL): the report lists the records it could not read among the
// unscored, with the cases whose check BFCL's checker would fail on.
func ScoreBFCLFile(ctx context.Context, path string, read BFCLReadOptions, check metrics.BFCLOptions, w io.Writer) (*BFCLReport, error) {
	cases, unscored, err := ReadBFCLFile(path, read)
	if err != nil {
		return nil, err
	}
	rep, err := ScoreBFCL(ctx, path, cases, check, w)
	if err != nil {
		return nil, err
	}
	rep.Cases += len(unscored)
	rep.Unscored = append(unscored, rep.Unscored...)
	return rep, nil
}
