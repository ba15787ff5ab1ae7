// Package score scores files of predictions against gold with the
// reference metrics of eval/metrics, for outputs that did not come from
// toolenv's harness: NESTful's scorer (Nestful) and BFCL's AST checker
// (BFCL). It reads the reference fixtures' formats and JSON Lines of the
// same records, and writes a Markdown report and a JSON one.
package score

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// record is one JSON record of an input file and where it was.
type record struct {
	v pyfmt.Dict
	// where names it in errors: "line 7" or "record 7".
	where string
	n     int
}

// badInput is a malformed input: what is wrong, where, and how to fix it.
func badInput(path, where, hint, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if where != "" {
		msg = where + ": " + msg
	}
	return toolenv.Errorw(toolenv.StatusInvalidArguments, hint, "%s: %s", path, msg)
}

// readFile reads path as one JSON value (an object or an array) or, when
// it is not one, as JSON Lines (one value per non-empty line). Values are
// read as Python's json.loads reads them.
func readFile(path string) (pyfmt.Dict, []record, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, toolenv.Errorw(toolenv.StatusNotFound, "give the path of a JSON or JSON Lines file", "%s: no such file", path)
		}
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	text := strings.TrimPrefix(string(raw), "\ufeff")
	if strings.TrimSpace(text) == "" {
		return nil, nil, badInput(path, "", "the file must hold JSON records", "the file is empty")
	}
	v, whole := pyfmt.Loads(text)
	if whole == nil {
		switch x := v.(type) {
		case []any:
			recs := make([]record, len(x))
			for i, it := range x {
				d, ok := it.(pyfmt.Dict)
				if !ok {
					return nil, nil, badInput(path, fmt.Sprintf("record %d", i+1), "each record is a JSON object", "a record must be an object, not %s", jsonKind(it))
				}
				recs[i] = record{v: d, where: fmt.Sprintf("record %d", i+1), n: i + 1}
			}
			return nil, recs, nil
		case pyfmt.Dict:
			where := "record 1"
			if !strings.Contains(strings.TrimSpace(text), "\n") {
				where = "line 1"
			}
			return x, []record{{v: x, where: where, n: 1}}, nil
		default:
			return nil, nil, badInput(path, "", "the file must hold JSON objects", "the file holds %s", jsonKind(v))
		}
	}
	// JSON Lines, unless the first line is not a value of its own: then
	// the file was meant as one JSON value, and its error is the one to
	// report.
	first := strings.TrimSpace(strings.SplitN(strings.TrimLeft(text, " \t\r\n"), "\n", 2)[0])
	if _, err := pyfmt.Loads(first); err != nil {
		var le *pyfmt.LoadsError
		if errors.As(whole, &le) {
			line, col := lineCol(text, le.Offset)
			return nil, nil, badInput(path, fmt.Sprintf("line %d, column %d", line, col), "the file must be one JSON value or JSON Lines", "not JSON: %s", le.Msg)
		}
		return nil, nil, badInput(path, "", "the file must be one JSON value or JSON Lines", "not JSON: %v", whole)
	}
	var recs []record
	for i, line := range bytes.Split([]byte(text), []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		where := fmt.Sprintf("line %d", i+1)
		v, err := pyfmt.Loads(string(line))
		if err != nil {
			return nil, nil, badInput(path, where, "each line of a JSON Lines file is one JSON object", "not JSON: %v", err)
		}
		d, ok := v.(pyfmt.Dict)
		if !ok {
			return nil, nil, badInput(path, where, "each line of a JSON Lines file is one JSON object", "a record must be an object, not %s", jsonKind(v))
		}
		recs = append(recs, record{v: d, where: where, n: i + 1})
	}
	return nil, recs, nil
}

// jsonKind names a value's JSON type for messages.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case []any:
		return "an array"
	case pyfmt.Dict:
		return "an object"
	default:
		return "a number"
	}
}

// field returns the first of names the record has.
func (r record) field(names ...string) (any, string, bool) {
	for _, n := range names {
		if v, ok := r.v.Get(n); ok {
			return v, n, true
		}
	}
	return nil, "", false
}

// str returns a string field ("" and false when absent; an error when it
// is there but not a string).
func (r record) str(path, name string) (string, bool, error) {
	v, ok := r.v.Get(name)
	if !ok || v == nil {
		return "", false, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", false, badInput(path, r.where, "", "%q must be a string, not %s", name, jsonKind(v))
	}
	return s, true, nil
}

// lineCol turns a byte offset of text into a line and a column (from 1).
func lineCol(text string, off int) (int, int) {
	off = min(off, len(text))
	line := 1 + strings.Count(text[:off], "\n")
	col := off - strings.LastIndex(text[:off], "\n")
	return line, col
}
