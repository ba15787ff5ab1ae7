package pyfmt

import (
	"regexp"

	toolenv "github.com/toolenv/toolenv"
)

// trailingComma is a comma before a closing bracket, which models write
// and JSON forbids.
var trailingComma = regexp.MustCompile(`,(\s*[}\]])`)

// DecodeRepaired reads a JSON value a model wrote, forgiving what models
// get wrong: s is read as JSON (as toolenv.DecodeJSON reads it); failing
// that, as JSON with the commas before closing brackets dropped; failing
// that, as a Python literal under opt (models trained on ToolBench answer
// with Python dicts). repaired says the first reading failed. When none
// succeeds, the error is the JSON one, of the text without those commas.
func DecodeRepaired(s string, opt ParseOptions) (v any, repaired bool, err error) {
	if v, err = decodeJSON(s); err == nil {
		return v, false, nil
	}
	if fixed := trailingComma.ReplaceAllString(s, "$1"); fixed != s {
		if v, err = decodeJSON(fixed); err == nil {
			return v, true, nil
		}
	}
	if v, perr := Parse(s, opt); perr == nil {
		return v, true, nil
	}
	return nil, false, err
}

func decodeJSON(s string) (any, error) {
	var v any
	if err := toolenv.DecodeJSON([]byte(s), &v); err != nil {
		return nil, err
	}
	return v, nil
}
