package doctest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// A documented figure is a number a command of the docs produces, shown
// in the docs between markers and checked against a fresh run by the doc
// test. The page that runs the command defines the figure in a comment
// block, one figure a line:
//
//	<!-- figures
//	bird.slot.kept  out/bird/report.json  flavors[flavor=slot].kept
//	failover.pct    failover.json         settings[2].correct_percent  fmt=%.1f tol=0.5
//	-->
//
// ID, then the file the page's blocks wrote (relative to the page's
// folder), then where the number is in it: a JSON path (keys, [N] indexes,
// [key=value] picks the element of a list whose key has that value) or
// re=REGEX, whose first group is the number. Options: per= (a JSON path
// whose value divides the figure: a share of a total), fmt= (%,d, the
// default, an integer with thousands separators; or a float verb such as
// %.1f), scale= (multiplies the value first: scale=100 shows a fraction as
// a percentage) and tol= (the largest difference allowed between the
// documented number and the fresh one, in the units shown; 0, the
// default, wants the same number once formatted). Any page (README.md
// too) shows a figure with <!--fig:ID-->286<!--/fig-->.

// FigureDef defines a documented figure.
type FigureDef struct {
	ID    string
	File  string // the page that defines it
	Line  int
	Path  string // the output file, relative to the page's folder
	JSON  string // a JSON path, or
	Regex *regexp.Regexp
	Per   string // a JSON path whose value divides the figure's
	Fmt   string
	Scale float64
	Tol   float64
}

// FigureUse is a figure shown in a document.
type FigureUse struct {
	ID    string
	File  string
	Line  int
	Value string // as shown
}

// FigureValue is a figure's fresh value.
type FigureValue struct {
	Def   FigureDef
	Value float64 // scaled
	Shown string  // formatted
}

var (
	figBlockStart = regexp.MustCompile(`^\s*<!--\s*figures\b`)
	figUse        = regexp.MustCompile(`<!--fig:([A-Za-z0-9_.\-]+)-->(.*?)<!--/fig-->`)
)

// ParseFigures reads a document's figure definitions and uses.
func ParseFigures(name string, src []byte) (defs []FigureDef, uses []FigureUse, err error) {
	var errs []string
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	n, inDefs, inFence := 0, false, false
	for sc.Scan() {
		n++
		line := sc.Text()
		t := strings.TrimSpace(line)
		if !inDefs && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if inDefs {
			if strings.HasPrefix(t, "-->") {
				inDefs = false
				continue
			}
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			d, err := parseFigureDef(t)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s:%d: %v", name, n, err))
				continue
			}
			d.File, d.Line = name, n
			defs = append(defs, d)
			continue
		}
		if figBlockStart.MatchString(line) {
			inDefs = true
			continue
		}
		prose := outsideCode(line)
		for _, m := range figUse.FindAllStringSubmatch(prose, -1) {
			uses = append(uses, FigureUse{ID: m[1], File: name, Line: n, Value: m[2]})
		}
		if strings.Contains(prose, "<!--fig:") && len(figUse.FindAllString(prose, -1)) != strings.Count(prose, "<!--fig:") {
			errs = append(errs, fmt.Sprintf("%s:%d: a figure marker without its end: write <!--fig:ID-->VALUE<!--/fig--> on one line", name, n))
		}
	}
	if inDefs {
		errs = append(errs, fmt.Sprintf("%s: a figures block is never closed with -->", name))
	}
	if len(errs) > 0 {
		return defs, uses, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return defs, uses, sc.Err()
}

func parseFigureDef(line string) (FigureDef, error) {
	f := strings.Fields(line)
	if len(f) < 3 {
		return FigureDef{}, fmt.Errorf("a figure is defined as ID FILE PATH [fmt=… scale=… tol=…], not %q", line)
	}
	d := FigureDef{ID: f[0], Path: f[1], Fmt: "%,d", Scale: 1}
	if strings.HasPrefix(f[2], "re=") {
		re, err := regexp.Compile(strings.TrimPrefix(f[2], "re="))
		if err != nil || re.NumSubexp() < 1 {
			return d, fmt.Errorf("figure %s: %s: want a regular expression with one group around the number", d.ID, f[2])
		}
		d.Regex = re
	} else {
		if _, err := splitPath(f[2]); err != nil {
			return d, fmt.Errorf("figure %s: %w", d.ID, err)
		}
		d.JSON = f[2]
	}
	for _, o := range f[3:] {
		k, v, _ := strings.Cut(o, "=")
		var err error
		switch k {
		case "fmt":
			d.Fmt = v
			if v != "%,d" && v != "%d" && !regexp.MustCompile(`^%\.\d+f$`).MatchString(v) {
				err = fmt.Errorf("fmt=%s: want %%,d, %%d or %%.Nf", v)
			}
		case "scale":
			d.Scale, err = strconv.ParseFloat(v, 64)
		case "per":
			d.Per = v
			if d.JSON == "" {
				err = fmt.Errorf("per= divides a JSON figure by another value of the file; a re= figure cannot use it")
			} else if _, perr := splitPath(v); perr != nil {
				err = perr
			}
		case "tol":
			d.Tol, err = strconv.ParseFloat(v, 64)
		default:
			err = fmt.Errorf("unknown option %q (fmt=, scale=, per=, tol=)", o)
		}
		if err != nil {
			return d, fmt.Errorf("figure %s: %v", d.ID, err)
		}
	}
	return d, nil
}

// Eval reads the figure's value from the folder a page ran in.
func (d FigureDef) Eval(dir string) (FigureValue, error) {
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(d.Path)))
	if err != nil {
		return FigureValue{}, fmt.Errorf("figure %s (%s:%d): %w", d.ID, d.File, d.Line, err)
	}
	var v float64
	if d.Regex != nil {
		m := d.Regex.FindSubmatch(b)
		if m == nil {
			return FigureValue{}, fmt.Errorf("figure %s (%s:%d): %s does not match %s", d.ID, d.File, d.Line, d.Path, d.Regex)
		}
		v, err = parseShown(string(m[1]))
	} else {
		var doc any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return FigureValue{}, fmt.Errorf("figure %s (%s:%d): %s is not JSON: %w", d.ID, d.File, d.Line, d.Path, err)
		}
		v, err = jsonNumber(doc, d.JSON)
		if err == nil && d.Per != "" {
			var per float64
			per, err = jsonNumber(doc, d.Per)
			if err == nil && per == 0 {
				err = fmt.Errorf("%s is 0: the figure is undefined", d.Per)
			}
			v /= per
		}
	}
	if err != nil {
		return FigureValue{}, fmt.Errorf("figure %s (%s:%d): %s: %w", d.ID, d.File, d.Line, d.Path, err)
	}
	v *= d.Scale
	return FigureValue{Def: d, Value: v, Shown: format(d.Fmt, v)}, nil
}

// Check compares a documented figure with its fresh value.
func (u FigureUse) Check(v FigureValue) error {
	shown, err := parseShown(u.Value)
	if err != nil {
		return fmt.Errorf("%s:%d: figure %s shows %q, which is not a number", u.File, u.Line, u.ID, u.Value)
	}
	fresh, _ := parseShown(v.Shown)
	if math.Abs(shown-fresh) <= v.Def.Tol+1e-9 {
		return nil
	}
	return fmt.Errorf("%s:%d: figure %s shows %s, a fresh run gives %s (tolerance %g; defined at %s:%d, read from %s); go test ./devtools/doctest -run TestDocs -update writes the fresh value",
		u.File, u.Line, u.ID, u.Value, v.Shown, v.Def.Tol, v.Def.File, v.Def.Line, v.Def.Path)
}

func format(f string, v float64) string {
	switch f {
	case "%d":
		return strconv.FormatInt(int64(math.Round(v)), 10)
	case "%,d":
		s := strconv.FormatInt(int64(math.Abs(math.Round(v))), 10)
		var b strings.Builder
		if v < 0 && math.Round(v) != 0 {
			b.WriteByte('-')
		}
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		return b.String()
	}
	return fmt.Sprintf(f, v)
}

// parseShown reads a number as a page shows it: "1,389", "98.6", "0.998".
func parseShown(s string) (float64, error) {
	s = strings.TrimSpace(strings.NewReplacer(",", "", " ", "", "\u202f", "", "%", "", "*", "").Replace(s))
	return strconv.ParseFloat(s, 64)
}

type pathStep struct {
	key      string
	index    int // -1 when none
	selKey   string
	selValue string
}

// splitPath reads a JSON path: a.b[2].c[name=x].d
func splitPath(p string) ([]pathStep, error) {
	var steps []pathStep
	for _, part := range strings.Split(p, ".") {
		key, rest, hasSel := strings.Cut(part, "[")
		if hasSel && rest == "" {
			return nil, fmt.Errorf("path %q: a [ without its ]", p)
		}
		if key != "" {
			steps = append(steps, pathStep{key: key, index: -1})
		}
		for rest != "" {
			sel, after, ok := strings.Cut(rest, "]")
			if !ok {
				return nil, fmt.Errorf("path %q: a [ without its ]", p)
			}
			st := pathStep{index: -1}
			if k, v, ok := strings.Cut(sel, "="); ok {
				st.selKey, st.selValue = k, v
			} else {
				n, err := strconv.Atoi(sel)
				if err != nil {
					return nil, fmt.Errorf("path %q: [%s]: want an index or key=value", p, sel)
				}
				st.index = n
			}
			steps = append(steps, st)
			rest = strings.TrimPrefix(after, "[")
			if after != "" && !strings.HasPrefix(after, "[") {
				return nil, fmt.Errorf("path %q: %q after ]", p, after)
			}
		}
		if key == "" && !strings.HasPrefix(part, "[") {
			return nil, fmt.Errorf("path %q: an empty key", p)
		}
	}
	return steps, nil
}

func jsonNumber(doc any, path string) (float64, error) {
	steps, err := splitPath(path)
	if err != nil {
		return 0, err
	}
	cur := doc
	for i, st := range steps {
		where := fmt.Sprintf("at step %d of %s", i+1, path)
		switch {
		case st.key != "":
			m, ok := cur.(map[string]any)
			if !ok {
				return 0, fmt.Errorf("%s: not an object", where)
			}
			v, ok := m[st.key]
			if !ok {
				keys := make([]string, 0, len(m))
				for k := range m {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				return 0, fmt.Errorf("%s: no key %q (keys: %s)", where, st.key, strings.Join(keys, ", "))
			}
			cur = v
		case st.index >= 0:
			l, ok := cur.([]any)
			if !ok || st.index >= len(l) {
				return 0, fmt.Errorf("%s: no element %d", where, st.index)
			}
			cur = l[st.index]
		default:
			l, ok := cur.([]any)
			if !ok {
				return 0, fmt.Errorf("%s: not a list", where)
			}
			found := false
			for _, e := range l {
				if m, ok := e.(map[string]any); ok && fmt.Sprint(m[st.selKey]) == st.selValue {
					cur, found = e, true
					break
				}
			}
			if !found {
				return 0, fmt.Errorf("%s: no element with %s=%s", where, st.selKey, st.selValue)
			}
		}
	}
	switch v := cur.(type) {
	case json.Number:
		return v.Float64()
	case bool:
		if v {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("%s: %v is not a number", path, cur)
}

// UpdateFigures writes fresh values into a document's markers and
// returns the new text and how many markers changed.
func UpdateFigures(src []byte, values map[string]FigureValue) ([]byte, int) {
	n := 0
	lines := strings.SplitAfter(string(src), "\n")
	inFence := false
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
		}
		if inFence {
			continue
		}
		parts := strings.Split(line, "`")
		for j := 0; j < len(parts); j += 2 { // outside code spans
			parts[j] = replaceFigures(parts[j], values, &n)
		}
		lines[i] = strings.Join(parts, "`")
	}
	return []byte(strings.Join(lines, "")), n
}

// outsideCode is a line with its inline code spans blanked, so that a
// marker quoted in code (`<!--fig:ID-->`) is not one.
func outsideCode(line string) string {
	parts := strings.Split(line, "`")
	for j := 1; j < len(parts); j += 2 {
		parts[j] = strings.Repeat(" ", len(parts[j]))
	}
	return strings.Join(parts, "`")
}

// replaceFigures writes fresh values into the markers of text that differ.
func replaceFigures(text string, values map[string]FigureValue, n *int) string {
	return figUse.ReplaceAllStringFunc(text, func(m string) string {
		sub := figUse.FindStringSubmatch(m)
		v, ok := values[sub[1]]
		if !ok {
			return m
		}
		u := FigureUse{ID: sub[1], Value: sub[2]}
		if u.Check(v) == nil {
			return m
		}
		*n++
		return "<!--fig:" + sub[1] + "-->" + v.Shown + "<!--/fig-->"
	})
}
