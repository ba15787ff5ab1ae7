package simulate

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

// output is a simulator's answer, parsed: the {error, response} envelope
// every prompt asks for, and the CoT prompt's rationale.
type output struct {
	// Error is the simulated API's error message ("" on success).
	Error string
	// Response is the simulated response: a string, or the object or
	// list the model wrote (pyfmt.Dict, []any, ... as pyfmt.ParseLoose gives).
	Response any
	// HasResponse says the answer had a "response" member.
	HasResponse bool
	// Mechanism is the CoT prompt's "mechanism_of_the_api".
	Mechanism string
	// Repairs name what had to be fixed to read the answer, in order.
	Repairs []string
	// Truncated says the answer stopped in the middle.
	Truncated bool
}

// The repairs parseOutput may apply.
const (
	repairThink     = "think_block"      // a <think>...</think> block before the answer
	repairFence     = "code_fence"       // ```json ... ``` around the answer
	repairLeading   = "leading_text"     // prose before the JSON object
	repairTrailing  = "trailing_text"    // prose after the JSON object
	repairLoose     = "loose_json"       // single quotes, Python literals, trailing commas, raw newlines
	repairTruncated = "closed_truncated" // the text stopped inside the JSON; open values were closed
	repairEnvelope  = "envelope_fields"  // fields cut out of an object that is not JSON (unescaped quotes)
	repairBare      = "bare_response"    // an object without "error"/"response" taken as the response
)

// errNoJSON is returned when an answer holds no JSON object at all.
var errNoJSON = errors.New("the answer holds no JSON object")

var (
	thinkBlock = regexp.MustCompile(`(?s)<think>.*?</think>`)
	fenceBlock = regexp.MustCompile("(?s)```[a-zA-Z]*[ \t]*\r?\n?(.*?)```")
)

// parseOutput reads a model's answer as the {error, response} JSON the
// prompts ask for, repairing what can be repaired: code fences, prose
// around the object, single quotes and Python literals, trailing commas,
// truncated JSON, and the unescaped quotes MirrorAPI writes inside its
// "response" string (its system prompt's own example has them).
func parseOutput(text string) (*output, error) {
	out := &output{}
	t := strings.TrimSpace(strings.TrimPrefix(text, "\ufeff"))
	if strings.Contains(t, "<think>") {
		if cleaned := thinkBlock.ReplaceAllString(t, ""); cleaned != t {
			t = strings.TrimSpace(cleaned)
			out.Repairs = append(out.Repairs, repairThink)
		}
	}
	if strings.Contains(t, "```") {
		if m := fenceBlock.FindStringSubmatch(t); m != nil && strings.Contains(m[1], "{") {
			t = strings.TrimSpace(m[1])
			out.Repairs = append(out.Repairs, repairFence)
		} else if i := strings.Index(t, "```"); i >= 0 && strings.Contains(t[i:], "{") && strings.Count(t, "```") == 1 {
			// An opening fence whose answer was cut before the closing one.
			t = strings.TrimSpace(t[i+3:])
			t = strings.TrimLeft(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
			out.Repairs = append(out.Repairs, repairFence)
		}
	}
	start := strings.IndexByte(t, '{')
	if start < 0 {
		return nil, errNoJSON
	}
	if strings.TrimSpace(t[:start]) != "" {
		out.Repairs = append(out.Repairs, repairLeading)
	}
	t = t[start:]

	obj, rest, err := strictObject(t)
	if err != nil || !isEnvelope(obj) {
		if lv, end, truncated, lerr := pyfmt.ParseLoose(t, pyfmt.LooseOptions{KeepPartial: true}); lerr == nil {
			if o, ok := lv.(pyfmt.Dict); ok && (isEnvelope(o) || obj == nil && len(o) > 0) {
				obj, rest = o, t[end:]
				out.Repairs = append(out.Repairs, repairLoose)
				if truncated {
					out.Truncated = true
					out.Repairs = append(out.Repairs, repairTruncated)
				}
			}
		}
	}
	if obj == nil {
		if env := extractEnvelope(t); env != nil {
			obj, rest = env.obj, ""
			out.Truncated = out.Truncated || env.truncated
			out.Repairs = append(out.Repairs, repairEnvelope)
			if env.truncated {
				out.Repairs = append(out.Repairs, repairTruncated)
			}
		}
	}
	if obj == nil {
		if err == nil {
			err = errNoJSON
		}
		return nil, fmt.Errorf("the answer is not {\"error\", \"response\"} JSON: %w", err)
	}
	if strings.TrimSpace(rest) != "" {
		out.Repairs = append(out.Repairs, repairTrailing)
	}
	if !isEnvelope(obj) {
		out.Response, out.HasResponse = obj, true
		out.Repairs = append(out.Repairs, repairBare)
		return out, nil
	}
	if v, ok := obj.Get("error"); ok {
		out.Error = textOf(v)
	}
	out.Response, out.HasResponse = obj.Get("response")
	if v, ok := obj.Get("mechanism_of_the_api"); ok {
		out.Mechanism = textOf(v)
	}
	return out, nil
}

// strictObject decodes the JSON object at the start of t and returns it
// with the text after it.
func strictObject(t string) (pyfmt.Dict, string, error) {
	v, end, err := pyfmt.DecodeOrderedPrefix(t)
	if err != nil {
		return nil, "", err
	}
	o, ok := v.(pyfmt.Dict)
	if !ok {
		return nil, "", errNoJSON
	}
	return o, t[end:], nil
}

// isEnvelope reports whether o has the envelope's "error" or "response".
func isEnvelope(o pyfmt.Dict) bool {
	if o == nil {
		return false
	}
	_, e := o.Get("error")
	_, r := o.Get("response")
	return e || r
}

// textOf renders an envelope field as text: strings as they are, null as
// "", anything else as compact JSON.
func textOf(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	return string(encodeJSON(v))
}

var (
	errorKey     = regexp.MustCompile(`["']error["']\s*:\s*`)
	responseKey  = regexp.MustCompile(`["']response["']\s*:\s*`)
	mechanismKey = regexp.MustCompile(`["']mechanism_of_the_api["']\s*:\s*`)
	nextKey      = regexp.MustCompile(`^\s*,\s*["'](?:error|response|mechanism_of_the_api)["']\s*:`)
)

type envelope struct {
	obj       pyfmt.Dict
	truncated bool
}

// extractEnvelope cuts the envelope's fields out of text that is not JSON
// because a string holds unescaped quotes, as MirrorAPI's own
// extract_attributes_json does with regular expressions (StableToolBench
// server/main_mirrorapi.py), but ending each string at the quote that is
// followed by the next field or the closing brace, not at the end of the
// text.
func extractEnvelope(t string) *envelope {
	rk := responseKey.FindStringIndex(t)
	if rk == nil {
		return nil
	}
	env := &envelope{}
	if mk := mechanismKey.FindStringIndex(t); mk != nil && mk[0] < rk[0] {
		if s, _, ok := fieldString(t[mk[1]:]); ok {
			env.obj = append(env.obj, pyfmt.Item{Key: "mechanism_of_the_api", Value: s})
		}
	}
	if ek := errorKey.FindStringIndex(t); ek != nil && ek[0] < rk[0] {
		if s, _, ok := fieldString(t[ek[1]:]); ok {
			env.obj = append(env.obj, pyfmt.Item{Key: "error", Value: s})
		} else if v, _, _, err := pyfmt.ParseLoose(t[ek[1]:], pyfmt.LooseOptions{KeepPartial: true}); err == nil {
			env.obj = append(env.obj, pyfmt.Item{Key: "error", Value: v})
		}
	}
	val := t[rk[1]:]
	switch {
	case strings.HasPrefix(val, `"`) || strings.HasPrefix(val, `'`):
		s, truncated, ok := lastString(val)
		if !ok {
			return nil
		}
		env.obj = append(env.obj, pyfmt.Item{Key: "response", Value: s})
		env.truncated = truncated
	default:
		v, _, truncated, err := pyfmt.ParseLoose(val, pyfmt.LooseOptions{KeepPartial: true})
		if err != nil {
			return nil
		}
		env.obj = append(env.obj, pyfmt.Item{Key: "response", Value: v})
		env.truncated = truncated
	}
	return env
}

// fieldString reads a quoted value that is followed by another envelope
// field: it ends at the first quote after which the next key comes.
func fieldString(v string) (string, int, bool) {
	if v == "" || v[0] != '"' && v[0] != '\'' {
		return "", 0, false
	}
	q := v[0]
	for i := 1; i < len(v); i++ {
		if v[i] == '\\' {
			i++
			continue
		}
		if v[i] == q && nextKey.MatchString(v[i+1:]) {
			return pyfmt.UnescapeLoose(v[1:i]), i + 1, true
		}
	}
	return "", 0, false
}

// lastString reads the last field's quoted value: it ends at the last
// quote after which only the closing brace (or another field) follows; if
// there is none, the text was cut and everything up to the end is kept.
func lastString(v string) (string, bool, bool) {
	q := v[0]
	for i := len(v) - 1; i > 0; i-- {
		if v[i] != q || v[i-1] == '\\' && (i < 2 || v[i-2] != '\\') {
			continue
		}
		rest := strings.TrimSpace(v[i+1:])
		if strings.HasPrefix(rest, "}") || nextKey.MatchString(v[i+1:]) {
			return pyfmt.UnescapeLoose(v[1:i]), false, true
		}
	}
	return pyfmt.UnescapeLoose(v[1:]), true, true
}

// responseJSON returns an output's response as a JSON body.
func responseJSON(o *output) json.RawMessage {
	if !o.HasResponse || o.Response == nil {
		return json.RawMessage(`""`)
	}
	return encodeJSON(o.Response)
}
