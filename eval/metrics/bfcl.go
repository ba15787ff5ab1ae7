package metrics

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

// BFCL's checker, exactly: the Berkeley Function Calling Leaderboard's AST
// checker for Python (gorilla, berkeley-function-call-leaderboard,
// bfcl/eval_checker/ast_eval/ast_checker.py, with the decoder checks of
// its eval runner), verdict for verdict. Its inputs are BFCL's own: the
// function descriptions of a test entry (parameter types "string",
// "integer", "float", "boolean", "array", "tuple", "dict", "any"), the
// possible answers (per expected call, per parameter, every accepted
// value, "" marking an optional parameter that may be left out), and the
// model's output as BFCL's decoder gives it ([{name: {param: value}}], or
// nil when it could not be decoded). Values are what pyfmt.Loads reads.
//
// This is not the Live API-Bench paper's Appendix G categories
// (ErrorCategory): those classify a failed attempt by a first-match
// order of its own; BFCL's checker validates one call at a time and names
// the first check that fails in its own vocabulary (BFCLVerdicts).

// The verdicts BFCL's checker gives (its error_type values), and "valid".
const (
	BFCLValid                 = "valid"
	BFCLDecoderFailed         = "ast_decoder:decoder_failed"
	BFCLWrongOutputFormat     = "ast_decoder:decoder_wrong_output_format"
	BFCLSimpleWrongCount      = "simple_function_checker:wrong_count"
	BFCLMultipleWrongCount    = "multiple_function_checker:wrong_count"
	BFCLNoOrderWrongCount     = "parallel_function_checker_no_order:wrong_count"
	BFCLNoOrderNoMatch        = "parallel_function_checker_no_order:cannot_find_match"
	BFCLEnforceOrderWrongCnt  = "parallel_function_checker_enforce_order:wrong_count"
	BFCLWrongFuncName         = "simple_function_checker:wrong_func_name"
	BFCLMissingRequired       = "simple_function_checker:missing_required"
	BFCLUnexpectedParam       = "simple_function_checker:unexpected_param"
	BFCLMissingOptional       = "simple_function_checker:missing_optional"
	BFCLTypeErrorSimple       = "type_error:simple"
	BFCLTypeErrorNested       = "type_error:nested"
	BFCLValueErrorString      = "value_error:string"
	BFCLValueErrorList        = "value_error:list/tuple"
	BFCLValueErrorDictKey     = "value_error:dict_key"
	BFCLValueErrorDictValue   = "value_error:dict_value"
	BFCLValueErrorListDictCnt = "value_error:list_dict_count"
	BFCLValueErrorOthers      = "value_error:others"
)

// BFCLVerdicts lists the verdicts in a stable order for reports.
var BFCLVerdicts = []string{
	BFCLValid, BFCLDecoderFailed, BFCLWrongOutputFormat,
	BFCLSimpleWrongCount, BFCLMultipleWrongCount, BFCLNoOrderWrongCount, BFCLEnforceOrderWrongCnt, BFCLNoOrderNoMatch,
	BFCLWrongFuncName, BFCLMissingRequired, BFCLUnexpectedParam, BFCLMissingOptional,
	BFCLTypeErrorSimple, BFCLTypeErrorNested,
	BFCLValueErrorString, BFCLValueErrorList, BFCLValueErrorDictKey, BFCLValueErrorDictValue, BFCLValueErrorListDictCnt, BFCLValueErrorOthers,
	"simple_function_checker:unclear", "dict_checker:unclear", "list_dict_checker:unclear",
}

// BFCLFunction is a function description as BFCL's checker reads it.
type BFCLFunction struct {
	Name string `json:"name"`
	// Params are the properties of its parameters, by name.
	Params map[string]BFCLParam `json:"params"`
	// Required are the parameters it requires.
	Required []string `json:"required"`
}

// BFCLParam is what the checker reads of a parameter: its type and, for
// "array" and "tuple", the type of its items.
type BFCLParam struct {
	Type      string `json:"type"`
	ItemsType string `json:"items_type,omitempty"`
}

// BFCLResult is the checker's answer: valid, or the error_type of the
// first check that failed and its messages.
type BFCLResult struct {
	Valid     bool     `json:"valid"`
	ErrorType string   `json:"error_type,omitempty"`
	Errors    []string `json:"errors,omitempty"`
	// isVariable is type_checker's is_variable.
	isVariable bool
}

// Verdict is the result as one word: "valid" or the error_type.
func (r BFCLResult) Verdict() string {
	if r.Valid {
		return BFCLValid
	}
	return r.ErrorType
}

// BFCLOptions choose how the checker runs.
type BFCLOptions struct {
	// Ordered checks the calls one by one in the order of the output
	// (simple_function_checker on output i against expected call i,
	// a count mismatch being parallel_function_checker_enforce_order's
	// wrong_count) whatever the category, instead of the leaderboard's
	// dispatch (any order for parallel categories).
	Ordered bool
	// UnderscoreNames expects function names with '.' written '_', as
	// the leaderboard does for the models it lists in UNDERSCORE_TO_DOT
	// (OpenAI, Mistral, Google function calling).
	UnderscoreNames bool
}

// BFCLInputError is an input BFCL's checker itself would fail on (a
// function description without the expected fields, a possible answer
// of the wrong shape): there is no verdict.
type BFCLInputError struct{ Msg string }

// Error says what is wrong with the input.
func (e *BFCLInputError) Error() string { return "bfcl: " + e.Msg }

func inputErr(format string, args ...any) error {
	return &BFCLInputError{Msg: fmt.Sprintf(format, args...)}
}

// BFCLCheck runs BFCL's AST checker on one test entry: category is the
// test category ("simple_python", "multiple", "parallel",
// "parallel_multiple", …: a name holding "parallel" is checked in any
// order, one holding "multiple" as a multiple-function entry, anything
// else as a simple one), funcs its function descriptions, answers its
// possible answers (one {name: {param: [values]}} per expected call) and
// output the decoded model output (nil: the decoder failed). It returns
// the verdict; an error means BFCL's own checker would have failed on the
// input.
func BFCLCheck(category string, funcs []BFCLFunction, output any, answers []any, opt BFCLOptions) (BFCLResult, error) {
	c := &bfclChecker{funcs: funcs, opt: opt}
	if output == nil {
		return BFCLResult{ErrorType: BFCLDecoderFailed, Errors: []string{"the model output could not be decoded"}}, nil
	}
	calls, ok := bfclFormatOK(output)
	if !ok {
		return BFCLResult{ErrorType: BFCLWrongOutputFormat, Errors: []string{"the decoded output is not a list of {function: {parameter: value}} calls"}}, nil
	}
	res, err := c.dispatch(category, calls, answers)
	if err != nil {
		return BFCLResult{}, err
	}
	return res, nil
}

// bfclFormatOK is is_function_calling_format_output: a list whose every
// item is a dict of one key whose value is a dict ([] passes).
func bfclFormatOK(output any) ([]pyfmt.Dict, bool) {
	list, ok := output.([]any)
	if !ok {
		return nil, false
	}
	calls := make([]pyfmt.Dict, len(list))
	for i, it := range list {
		d, ok := it.(pyfmt.Dict)
		if !ok || len(d) != 1 {
			return nil, false
		}
		if _, ok := d[0].Value.(pyfmt.Dict); !ok {
			return nil, false
		}
		calls[i] = d
	}
	return calls, true
}

type bfclChecker struct {
	funcs []BFCLFunction
	opt   BFCLOptions
}

func wrong(errorType string, msg ...string) BFCLResult {
	return BFCLResult{ErrorType: errorType, Errors: msg}
}

func (c *bfclChecker) dispatch(category string, calls []pyfmt.Dict, answers []any) (BFCLResult, error) {
	if c.opt.Ordered {
		if !strings.Contains(category, "parallel") && !strings.Contains(category, "multiple") && len(answers) == 1 && len(c.funcs) > 0 && len(calls) == 1 {
			// One call against one expected call, as the leaderboard
			// checks a simple entry: against the entry's function
			// description, whatever name its possible answer gives
			// (simple_python_363's answer names "find_closest" for
			// "restaurant_search.find_closest").
			return c.simple(&c.funcs[0], calls[0], answers[0])
		}
		return c.enforceOrder(calls, answers)
	}
	switch {
	case strings.Contains(category, "parallel"):
		return c.noOrder(calls, answers)
	case strings.Contains(category, "multiple"):
		if len(calls) != len(answers) {
			return wrong(BFCLMultipleWrongCount, "Wrong number of functions."), nil
		}
		if len(answers) == 0 {
			return BFCLResult{}, inputErr("a multiple-function entry with no expected call")
		}
		fd, err := c.describe(answers[0])
		if err != nil {
			return BFCLResult{}, err
		}
		return c.simple(fd, calls[0], answers[0])
	default:
		if len(calls) != 1 {
			return wrong(BFCLSimpleWrongCount, "Wrong number of functions."), nil
		}
		if len(c.funcs) == 0 || len(answers) == 0 {
			return BFCLResult{}, inputErr("a simple entry needs one function description and one expected call")
		}
		return c.simple(&c.funcs[0], calls[0], answers[0])
	}
}

// describe is find_description of the function an expected call names.
func (c *bfclChecker) describe(answer any) (*BFCLFunction, error) {
	d, ok := answer.(pyfmt.Dict)
	if !ok || len(d) == 0 {
		return nil, inputErr("a possible answer must be an object {function: {parameter: [values]}}, not %s", pyfmt.Repr(answer))
	}
	name := d[0].Key
	for i := range c.funcs {
		if c.funcs[i].Name == name {
			return &c.funcs[i], nil
		}
	}
	return nil, inputErr("no function description for %q, which a possible answer names", name)
}

// noOrder is parallel_function_checker_no_order.
func (c *bfclChecker) noOrder(calls []pyfmt.Dict, answers []any) (BFCLResult, error) {
	if len(calls) != len(answers) {
		return wrong(BFCLNoOrderWrongCount, "Wrong number of functions."), nil
	}
	matched := map[int]bool{}
	for i, a := range answers {
		fd, err := c.describe(a)
		if err != nil {
			return BFCLResult{}, err
		}
		var res BFCLResult
		var errs []string
		for index := range calls {
			if matched[index] {
				continue
			}
			if res, err = c.simple(fd, calls[index], a); err != nil {
				return BFCLResult{}, err
			}
			if res.Valid {
				matched[index] = true
				break
			}
			errs = append(errs, fmt.Sprintf("model result index %d: %s %v", index, res.ErrorType, res.Errors))
		}
		if !res.Valid {
			return wrong(BFCLNoOrderNoMatch, append([]string{fmt.Sprintf("Could not find a matching function for index %d of possible answers.", i)}, errs...)...), nil
		}
	}
	return BFCLResult{Valid: true}, nil
}

// enforceOrder checks output i against expected call i.
func (c *bfclChecker) enforceOrder(calls []pyfmt.Dict, answers []any) (BFCLResult, error) {
	if len(calls) != len(answers) {
		return wrong(BFCLEnforceOrderWrongCnt, "Wrong number of functions."), nil
	}
	for i, a := range answers {
		fd, err := c.describe(a)
		if err != nil {
			return BFCLResult{}, err
		}
		res, err := c.simple(fd, calls[i], a)
		if err != nil || !res.Valid {
			return res, err
		}
	}
	return BFCLResult{Valid: true}, nil
}

// pyTypes are PYTHON_TYPE_MAPPING: BFCL's type names and the Python type
// a value must have ("tuple" and "array" are lists, "any" a str).
var pyTypes = map[string]string{
	"string": "str", "integer": "int", "float": "float", "boolean": "bool",
	"array": "list", "tuple": "list", "dict": "dict", "any": "str",
}

// simple is simple_function_checker for Python.
func (c *bfclChecker) simple(fd *BFCLFunction, output pyfmt.Dict, answer any) (BFCLResult, error) {
	ad, ok := answer.(pyfmt.Dict)
	if !ok || len(ad) == 0 {
		return BFCLResult{}, inputErr("a possible answer must be an object {function: {parameter: [values]}}, not %s", pyfmt.Repr(answer))
	}
	possible, ok := ad[0].Value.(pyfmt.Dict)
	if !ok {
		return BFCLResult{}, inputErr("the possible answer for %q must map parameters to lists of values", ad[0].Key)
	}
	name := fd.Name
	if c.opt.UnderscoreNames {
		name = strings.ReplaceAll(name, ".", "_")
	}
	params, ok := output.Get(name)
	if !ok {
		return wrong(BFCLWrongFuncName, fmt.Sprintf("Function name %s not found in model output.", pyfmt.ReprString(name))), nil
	}
	modelParams := params.(pyfmt.Dict)
	for _, p := range fd.Required {
		if _, ok := modelParams.Get(p); !ok {
			return wrong(BFCLMissingRequired, fmt.Sprintf("Missing required parameter: %s.", pyfmt.ReprString(p))), nil
		}
	}
	for _, it := range modelParams {
		param, value := it.Key, it.Value
		details, inDoc := fd.Params[param]
		pa, inAnswer := possible.Get(param)
		if !inDoc || !inAnswer {
			return wrong(BFCLUnexpectedParam, fmt.Sprintf("Unexpected parameter: %s.", pyfmt.ReprString(param))), nil
		}
		expected, ok := pyTypes[details.Type]
		if !ok {
			return BFCLResult{}, inputErr("parameter %q of %q has type %q, which BFCL's Python checker does not know (string, integer, float, boolean, array, tuple, dict, any)", param, fd.Name, details.Type)
		}
		nested := ""
		if details.Type == "array" || details.Type == "tuple" {
			if nested, ok = pyTypes[details.ItemsType]; !ok {
				return BFCLResult{}, inputErr("parameter %q of %q is an %s without a known items type (%q)", param, fd.Name, details.Type, details.ItemsType)
			}
		}
		if details.Type == "float" && pyTypeName(value) == "int" {
			value = pyToFloat(value)
		}
		paList, err := pyLen(pa)
		if err != nil {
			return BFCLResult{}, inputErr("the possible values of %q must be a list: %v", param, err)
		}
		tr := bfclTypeCheck(param, value, paList, details.Type, expected, nested)
		if !tr.Valid {
			return tr, nil
		}
		if !tr.isVariable {
			var res BFCLResult
			var err error
			handled := true
			switch {
			case expected == "dict":
				res, err = bfclDictChecker(param, value, paList)
			case expected == "list" && nested == "dict":
				res, err = bfclListDictChecker(param, value, paList)
			case expected == "str":
				res = bfclStringChecker(param, value.(string), paList)
			case expected == "list":
				res, err = bfclListChecker(param, value.([]any), paList)
			default:
				handled = false
			}
			if err != nil {
				return BFCLResult{}, err
			}
			if handled {
				if !res.Valid {
					return res, nil
				}
				continue
			}
		}
		if !pyIn(value, paList) {
			return wrong(BFCLValueErrorOthers, fmt.Sprintf("Invalid value for parameter %s: %s. Expected one of %s.", pyfmt.ReprString(param), pyfmt.Repr(value), pyfmt.Repr(pa))), nil
		}
	}
	for _, it := range possible {
		if _, ok := modelParams.Get(it.Key); ok {
			continue
		}
		has, err := pyContains(it.Value, "")
		if err != nil {
			return BFCLResult{}, inputErr("the possible values of %q: %v", it.Key, err)
		}
		if !has {
			return wrong(BFCLMissingOptional, fmt.Sprintf("Optional parameter %s not provided and not marked as optional.", pyfmt.ReprString(it.Key))), nil
		}
	}
	return BFCLResult{Valid: true}, nil
}

// pyLen returns the items of a list (BFCL indexes possible answers as
// lists; a string's items are its characters).
func pyLen(v any) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case pyfmt.Tuple:
		return []any(x), nil
	case string:
		return pyChars(x), nil
	}
	return nil, fmt.Errorf("TypeError: object of type '%s' has no len()", pyTypeName(v))
}

// pyToFloat is float(v) of an int.
func pyToFloat(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	i, ok := new(big.Int).SetString(string(n), 10)
	if !ok {
		return v
	}
	f, _ := new(big.Float).SetInt(i).Float64()
	return f
}

// bfclPossibleType is get_possible_answer_type: the Python type of the
// first possible value that is not "" ("" if there is none).
func bfclPossibleType(pa []any) string {
	for _, a := range pa {
		if a != "" {
			return pyTypeName(a)
		}
	}
	return ""
}

// bfclTypeCheck is type_checker, nested one level as BFCL's is.
func bfclTypeCheck(param string, value any, pa []any, description, expected, nested string) BFCLResult {
	res := BFCLResult{Valid: true, ErrorType: BFCLTypeErrorSimple}
	isVariable := false
	pt := bfclPossibleType(pa)
	if pt != "" && pt != expected {
		isVariable = true
	}
	if pyTypeName(value) == expected {
		if nested == "" {
			res.isVariable = isVariable
			res.ErrorType = ""
			return res
		}
		for _, item := range pa {
			flag := true
			if items, ok := item.([]any); ok {
				for _, v := range value.([]any) {
					if r := bfclTypeCheck(param, v, items, nested, nested, ""); !r.Valid {
						flag = false
						break
					}
				}
			}
			if flag {
				return BFCLResult{Valid: true, isVariable: isVariable}
			}
		}
		res.Valid = false
		res.Errors = []string{fmt.Sprintf("Nested type checking failed for parameter %s. Expected outer type %s with inner type %s. Parameter value: %s.", pyfmt.ReprString(param), description, nested, pyfmt.Repr(value))}
		res.ErrorType = BFCLTypeErrorNested
	}
	if pt != "" && pyTypeName(value) == pt {
		res.isVariable = true
		if res.Valid {
			res.ErrorType = ""
		}
		return res
	}
	res.Valid = false
	res.Errors = append(res.Errors, fmt.Sprintf("Incorrect type for parameter %s. Expected type %s, got %s. Parameter value: %s.", pyfmt.ReprString(param), description, pyTypeName(value), pyfmt.Repr(value)))
	res.ErrorType = BFCLTypeErrorSimple
	return res
}

// BFCLStandardize is standardize_string: spaces and ",./-_*^" removed,
// lower case (Python's str.lower), single quotes made double.
func BFCLStandardize(s string) string {
	// The characters removed are ASCII, which is never part of a longer
	// sequence: removing bytes keeps every other byte, lone surrogates
	// (in the generalized UTF-8 pyfmt keeps them in) included, as they are.
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', ',', '.', '/', '-', '_', '*', '^':
			continue
		}
		b.WriteByte(s[i])
	}
	return strings.ReplaceAll(pyLower(b.String()), "'", `"`)
}

// pyLower is Python's str.lower: Unicode's full lowercase mapping (İ is
// i and a combining dot) and the final form of sigma at the end of a
// word. Lone surrogates (in the generalized UTF-8 pyfmt keeps them in)
// are left as they are.
func pyLower(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if _, ok := pyfmt.SurrogateAt(s, i); ok {
			b.WriteString(s[i : i+3])
			i += 3
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 'İ':
			b.WriteString("i\u0307")
		case r == 'Σ':
			if finalSigma(s, i, i+size) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		case r < utf8.RuneSelf:
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
			b.WriteRune(r)
		default:
			b.WriteRune(unicode.ToLower(r))
		}
		i += size
	}
	return b.String()
}

// finalSigma is Unicode's Final_Sigma condition for the Σ at s[start:end]:
// a cased letter before it and none after it (case-ignorable characters
// skipped).
func finalSigma(s string, start, end int) bool {
	before := false
	for j := start; j > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:j])
		j -= size
		if caseIgnorable(r) {
			continue
		}
		before = cased(r)
		break
	}
	if !before {
		return false
	}
	for j := end; j < len(s); {
		r, size := utf8.DecodeRuneInString(s[j:])
		j += size
		if caseIgnorable(r) {
			continue
		}
		return !cased(r)
	}
	return true
}

func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r)
}

func caseIgnorable(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk) || r == '\'' || r == '.' || r == ':' || r == '^' || r == '`' || r == '\u00ad' || r == '\u2019'
}

// bfclStringChecker is string_checker.
func bfclStringChecker(param, value string, pa []any) BFCLResult {
	want := BFCLStandardize(value)
	for _, a := range pa {
		if s, ok := a.(string); ok && BFCLStandardize(s) == want {
			return BFCLResult{Valid: true}
		}
	}
	return wrong(BFCLValueErrorString, fmt.Sprintf("Invalid value for parameter %s: %s. Expected one of %s. Case insensitive.", pyfmt.ReprString(param), pyfmt.ReprString(value), pyfmt.Repr(pa)))
}

// standardizeStrings standardizes the strings among items (one level).
func standardizeStrings(items []any) []any {
	out := make([]any, len(items))
	for i, x := range items {
		if s, ok := x.(string); ok {
			out[i] = BFCLStandardize(s)
		} else {
			out[i] = x
		}
	}
	return out
}

// bfclListChecker is list_checker.
func bfclListChecker(param string, value []any, pa []any) (BFCLResult, error) {
	got := standardizeStrings(value)
	for _, a := range pa {
		items, err := pyLen(a)
		if err != nil {
			return BFCLResult{}, inputErr("a possible value of %q: %v", param, err)
		}
		if pyEqual(got, standardizeStrings(items)) {
			return BFCLResult{Valid: true}, nil
		}
	}
	return wrong(BFCLValueErrorList, fmt.Sprintf("Invalid value for parameter %s: %s. Expected one of %s.", pyfmt.ReprString(param), pyfmt.Repr(value), pyfmt.Repr(pa))), nil
}

// bfclDictChecker is dict_checker (which, after a wrong value, still
// looks for missing keys and then reports those instead).
func bfclDictChecker(param string, value any, pa []any) (BFCLResult, error) {
	model, ok := value.(pyfmt.Dict)
	if !ok {
		return BFCLResult{}, inputErr("parameter %q: a dict was expected, got %s", param, pyTypeName(value))
	}
	res := wrong("dict_checker:unclear")
	for _, a := range pa {
		if a == "" {
			continue
		}
		res = wrong("dict_checker:unclear")
		flag := true
		for _, it := range model {
			in, err := pyContains(a, it.Key)
			if err != nil {
				return BFCLResult{}, inputErr("a possible value of %q: %v", param, err)
			}
			if !in {
				res.Errors = append(res.Errors, fmt.Sprintf("Unexpected dict key parameter: '%s'.", it.Key))
				res.ErrorType = BFCLValueErrorDictKey
				flag = false
				break
			}
			v := it.Value
			if s, ok := v.(string); ok {
				v = BFCLStandardize(s)
			}
			av, err := pyGetItem(a, it.Key)
			if err != nil {
				return BFCLResult{}, inputErr("a possible value of %q: %v", param, err)
			}
			items, err := pyLen(av)
			if err != nil {
				return BFCLResult{}, inputErr("the possible values of key %q of %q: %v", it.Key, param, err)
			}
			if std := standardizeStrings(items); !pyIn(v, std) {
				res.Errors = append(res.Errors, fmt.Sprintf("Invalid value for parameter %s: %s. Expected one of %s.", pyfmt.ReprString(it.Key), pyfmt.Repr(it.Value), pyfmt.Repr(std)))
				res.ErrorType = BFCLValueErrorDictValue
				flag = false
				break
			}
		}
		ad, err := pyItems(a)
		if err != nil {
			return BFCLResult{}, inputErr("a possible value of %q: %v", param, err)
		}
		for _, it := range ad {
			if _, ok := model.Get(it.Key); ok {
				continue
			}
			has, err := pyContains(it.Value, "")
			if err != nil {
				return BFCLResult{}, inputErr("the possible values of key %q of %q: %v", it.Key, param, err)
			}
			if !has {
				res.Errors = append(res.Errors, fmt.Sprintf("Missing dict key parameter: '%s'.", it.Key))
				res.ErrorType = BFCLValueErrorDictKey
				flag = false
				break
			}
		}
		if flag {
			return BFCLResult{Valid: true}, nil
		}
	}
	return res, nil
}

// bfclListDictChecker is list_dict_checker.
func bfclListDictChecker(param string, value any, pa []any) (BFCLResult, error) {
	model, ok := value.([]any)
	if !ok {
		return BFCLResult{}, inputErr("parameter %q: a list was expected, got %s", param, pyTypeName(value))
	}
	res := wrong("list_dict_checker:unclear")
	for _, a := range pa {
		flag := true
		items, err := pyLen(a)
		if err != nil {
			return BFCLResult{}, inputErr("a possible value of %q: %v", param, err)
		}
		if len(model) != len(items) {
			res = wrong(BFCLValueErrorListDictCnt, "Wrong number of dictionaries in the list.")
			continue
		}
		for k := range model {
			res, err = bfclDictChecker(param, model[k], []any{items[k]})
			if err != nil {
				return BFCLResult{}, err
			}
			if !res.Valid {
				flag = false
				break
			}
		}
		if flag {
			return BFCLResult{Valid: true}, nil
		}
	}
	return res, nil
}

// pyIn is Python's x in items: an item equal to x (a NaN json.loads read
// is one shared object, so it is in a list holding it).
func pyIn(x any, items []any) bool {
	for _, e := range items {
		if pyEqual(x, e) {
			return true
		}
	}
	return false
}

// pyContains is Python's x in container: a dict's keys, a list's items, a
// string's substrings.
func pyContains(container any, x any) (bool, error) {
	switch c := container.(type) {
	case pyfmt.Dict:
		s, ok := x.(string)
		if !ok {
			return false, nil
		}
		_, in := c.Get(s)
		return in, nil
	case []any:
		return pyIn(x, c), nil
	case string:
		s, ok := x.(string)
		if !ok {
			return false, errors.New("TypeError: 'in <string>' requires string as left operand")
		}
		return strings.Contains(c, s), nil
	}
	return false, fmt.Errorf("TypeError: argument of type '%s' is not iterable", pyTypeName(container))
}
