package world

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// MaxTextLen is the longest text value a write accepts.
const MaxTextLen = 10000

// Convert checks v, a value from a caller (JSON-decoded: json.Number,
// float64, string, bool, nil), against column c's declared type and
// returns the value to bind, or a problem naming the column and the
// rule. param is the argument the value came in, for the problem.
//
// The rules follow SQLite's affinity, strictly: an INTEGER column takes
// integers (a number or a text holding one, without loss: 3.0 is 3, 3.5
// is refused); a REAL or NUMERIC column takes numbers (or numeric text);
// a TEXT column takes text (a number becomes its text, as SQLite would
// store it); a column without a type (or BLOB) takes any scalar. NULL is
// refused for a NOT NULL column. Objects and lists are refused
// everywhere.
func Convert(t *Table, c *Column, param string, v any) (any, *toolenv.Problem) {
	bad := func(code, expected, format string, args ...any) (any, *toolenv.Problem) {
		return nil, &toolenv.Problem{Param: param, Code: code, Expected: expected,
			Message: fmt.Sprintf("%s.%s: ", t.Name, c.Name) + fmt.Sprintf(format, args...)}
	}
	if v == nil {
		if c.NotNull || (t.WithoutRowID && c.PK > 0) {
			return bad("not_null", "a value", "the column is NOT NULL: give a value")
		}
		return nil, nil
	}
	if b, ok := v.(bool); ok {
		if c.Kind == "string" {
			return bad("wrong_type", "text", "the column is %s: true/false is not text (send \"true\" if you mean the word)", declared(c))
		}
		if b {
			v = json.Number("1")
		} else {
			v = json.Number("0")
		}
	}
	switch x := v.(type) {
	case map[string]any, []any:
		return bad("wrong_type", expected(c), "the column is %s: an object or a list is not a value", declared(c))
	case string:
		if len(x) > MaxTextLen {
			return bad("out_of_range", fmt.Sprintf("at most %d characters", MaxTextLen), "the value is %d characters long; at most %d are accepted", len(x), MaxTextLen)
		}
	}
	switch c.Kind {
	case "integer":
		if n, ok := asInt(v); ok {
			return n, nil
		}
		return bad("wrong_type", "an integer", "the column is %s: %s is not an integer", declared(c), show(v))
	case "number":
		if n, ok := asInt(v); ok {
			return n, nil
		}
		if f, ok := asFloat(v); ok {
			return f, nil
		}
		return bad("wrong_type", "a number", "the column is %s: %s is not a number", declared(c), show(v))
	case "string":
		switch x := v.(type) {
		case string:
			return x, nil
		case json.Number:
			return x.String(), nil
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		case int64:
			return strconv.FormatInt(x, 10), nil
		case int:
			return strconv.Itoa(x), nil
		}
		return bad("wrong_type", "text", "the column is %s: %s is not text", declared(c), show(v))
	}
	// No type or BLOB: any scalar, numbers kept as numbers.
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, nil
		}
		if f, err := x.Float64(); err == nil {
			return f, nil
		}
		return x.String(), nil
	case float64, int64, string:
		return x, nil
	case int:
		return int64(x), nil
	}
	return bad("wrong_type", "a value", "%s is not a value", show(v))
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, true
		}
		if f, err := x.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), true
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	case int64:
		return x, true
	case int:
		return int64(x), true
	case string:
		s := strings.TrimSpace(x)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && s == x {
			return n, true
		}
	}
	return 0, false
}

func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil && !math.IsInf(f, 0)
	case float64:
		return x, !math.IsInf(x, 0) && !math.IsNaN(x)
	case string:
		s := strings.TrimSpace(x)
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil && s == x && !math.IsInf(f, 0) && !math.IsNaN(f)
	}
	return 0, false
}

func declared(c *Column) string {
	if strings.TrimSpace(c.Type) == "" {
		return "declared without a type"
	}
	return strings.ToUpper(c.Type)
}

func expected(c *Column) string {
	switch c.Kind {
	case "integer":
		return "an integer"
	case "number":
		return "a number"
	case "string":
		return "text"
	}
	return "a value"
}

func show(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return strconv.Quote(x)
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

// same reports whether two stored values are the same value of the
// same storage class (an integer is not a real, text is not a blob).
func same(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || math.IsNaN(x) && math.IsNaN(y))
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []byte:
		y, ok := b.([]byte)
		return ok && string(x) == string(y)
	}
	return false
}

func sameRow(a, b []any) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if !same(a[i], b[i]) {
			return false
		}
	}
	return true
}

// encodeKey is the canonical text of a key (a rowid or primary key
// values) or a row, storage classes kept apart.
func encodeKey(vals []any) string {
	var b strings.Builder
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(0)
		}
		switch x := v.(type) {
		case nil:
			b.WriteByte('n')
		case int64:
			b.WriteByte('i')
			b.WriteString(strconv.FormatInt(x, 10))
		case float64:
			b.WriteByte('r')
			b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		case string:
			b.WriteByte('t')
			b.WriteString(x)
		case []byte:
			b.WriteByte('b')
			b.Write(x)
		default:
			fmt.Fprintf(&b, "?%v", x)
		}
	}
	return b.String()
}

// normValue converts a value scanned from SQLite to the types rows
// hold: int64, float64, string, []byte or nil.
func normValue(v any) any {
	switch x := v.(type) {
	case nil, int64, float64, string:
		return x
	case []byte:
		return append([]byte(nil), x...)
	case int:
		return int64(x)
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	}
	return fmt.Sprint(v)
}

// exported converts a stored value for reports (blobs as text).
func exported(v any) any {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	if f, ok := v.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
		switch {
		case math.IsInf(f, 1):
			return "Infinity"
		case math.IsInf(f, -1):
			return "-Infinity"
		}
		return nil
	}
	return v
}

// jsonValue encodes a stored value for a log so that decoding gives the
// same storage class back: a real always has a point or an exponent, a
// blob is {"blob": base64}, an infinite real {"real": "Infinity"}.
func jsonValue(v any) any {
	switch x := v.(type) {
	case float64:
		switch {
		case math.IsInf(x, 1):
			return map[string]string{"real": "Infinity"}
		case math.IsInf(x, -1):
			return map[string]string{"real": "-Infinity"}
		case math.IsNaN(x):
			return nil
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return json.RawMessage(s)
	case []byte:
		return map[string]string{"blob": base64.StdEncoding.EncodeToString(x)}
	}
	return v
}

// fromJSON is jsonValue's inverse, on a value decoded with numbers kept
// as json.Number.
func fromJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		s := x.String()
		if !strings.ContainsAny(s, ".eE") {
			if n, err := x.Int64(); err == nil {
				return n
			}
		}
		f, _ := x.Float64()
		return f
	case float64:
		return x
	case map[string]any:
		if b, ok := x["blob"].(string); ok {
			if raw, err := base64.StdEncoding.DecodeString(b); err == nil {
				return raw
			}
		}
		if r, ok := x["real"].(string); ok {
			if r == "-Infinity" {
				return math.Inf(-1)
			}
			return math.Inf(1)
		}
		return nil
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	}
	return v
}

func jsonRow(row []any) []any {
	if row == nil {
		return nil
	}
	out := make([]any, len(row))
	for i, v := range row {
		out[i] = jsonValue(v)
	}
	return out
}

// MarshalJSON encodes c with its values' storage classes kept.
func (c Change) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Table  string `json:"table"`
		Key    []any  `json:"key"`
		Before []any  `json:"before"`
		After  []any  `json:"after"`
	}{c.Table, jsonRow(c.Key), jsonRow(c.Before), jsonRow(c.After)})
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (c *Change) UnmarshalJSON(b []byte) error {
	var raw struct {
		Table  string `json:"table"`
		Key    []any  `json:"key"`
		Before []any  `json:"before"`
		After  []any  `json:"after"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	c.Table, c.Key, c.Before, c.After = raw.Table, canonRow(raw.Key), canonRow(raw.Before), canonRow(raw.After)
	return nil
}
