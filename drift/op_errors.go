package drift

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// planErrors switches the tool's error messages to the error style the
// step drew (the same for every tool of the step: an API changes its error
// format as a whole).
func planErrors(p *planner, t *toolenv.Tool) []Change {
	if p.style == nil || !p.hit() {
		return nil
	}
	if cur := t.Meta[MetaErrorStyle]; cur != "" {
		raw, _ := json.Marshal(p.style)
		if cur == string(raw) {
			return nil
		}
	}
	st := *p.style
	return []Change{{Op: OpErrorFormat, Rule: st.CodeStyle, Style: &st}}
}

// pickStyle draws the error style of a step.
func pickStyle(r *Rules, seed uint64, to string) *ErrorStyle {
	if len(r.ErrorStyles) == 0 {
		return nil
	}
	rng := seedFor(seed, to, "", "errors")
	st := r.ErrorStyles[rng.IntN(len(r.ErrorStyles))]
	return &st
}

func (s *ErrorStyle) check() error {
	switch s.CodeStyle {
	case "upper_snake", "kebab", "camel", "dotted", "http":
	default:
		return fmt.Errorf("unknown error code style %q (want upper_snake, kebab, camel, dotted or http)", s.CodeStyle)
	}
	if strings.Count(s.Template, "{code}") != 1 || strings.Count(s.Template, "{message}") != 1 {
		return fmt.Errorf("error template %q must hold {code} and {message} once each", s.Template)
	}
	return nil
}

// httpCodes are the HTTP statuses of toolenv's statuses, for the "http"
// code style (the same table as the REST front-end's).
var httpCodes = map[toolenv.Status]int{
	toolenv.StatusOK: 200, toolenv.StatusInvalidArguments: 400, toolenv.StatusUnknownTool: 404, toolenv.StatusNotFound: 404,
	toolenv.StatusUnauthorized: 401, toolenv.StatusRateLimited: 429, toolenv.StatusTimeout: 504, toolenv.StatusUpstreamError: 502,
	toolenv.StatusUnavailable: 503, toolenv.StatusGone: 410, toolenv.StatusBadRequest: 400, toolenv.StatusTooLarge: 413,
	toolenv.StatusCanceled: 499, toolenv.StatusInternal: 500,
}

// Code writes a status as an error code in the style.
func (s *ErrorStyle) Code(st toolenv.Status) string {
	ws := strings.Split(string(st), "_")
	switch s.CodeStyle {
	case "upper_snake":
		return strings.ToUpper(string(st))
	case "kebab":
		return strings.Join(ws, "-")
	case "camel":
		return joinWords(ws, styleCamel)
	case "dotted":
		return "error." + string(st)
	case "http":
		if c, ok := httpCodes[st]; ok {
			return fmt.Sprint(c)
		}
		return "500"
	}
	return string(st)
}

// Render writes an error message of status st in the style.
func (s *ErrorStyle) Render(st toolenv.Status, msg string) string {
	return strings.NewReplacer("{code}", s.Code(st), "{message}", msg).Replace(s.Template)
}

// Parse recovers the message from an error rendered in the style; ok is
// false when text is not in the style.
func (s *ErrorStyle) Parse(text string) (code, msg string, ok bool) {
	pat := regexp.QuoteMeta(s.Template)
	pat = strings.Replace(pat, regexp.QuoteMeta("{code}"), `([A-Za-z0-9_.\-]+)`, 1)
	pat = strings.Replace(pat, regexp.QuoteMeta("{message}"), `(.*)`, 1)
	re, err := regexp.Compile(`(?s)^` + pat + `$`)
	if err != nil {
		return "", "", false
	}
	m := re.FindStringSubmatch(text)
	if m == nil {
		return "", "", false
	}
	ci, mi := 1, 2
	if strings.Index(s.Template, "{message}") < strings.Index(s.Template, "{code}") {
		ci, mi = 2, 1
	}
	return m[ci], m[mi], true
}

// styleOf reads a tool's error style, or nil.
func styleOf(t *toolenv.Tool) *ErrorStyle {
	if t == nil || t.Meta[MetaErrorStyle] == "" {
		return nil
	}
	var s ErrorStyle
	if json.Unmarshal([]byte(t.Meta[MetaErrorStyle]), &s) != nil || s.check() != nil {
		return nil
	}
	return &s
}
