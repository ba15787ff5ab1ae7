package drift

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// Changelog renders the manifest as a Markdown changelog, newest step
// first: per step a summary table of change kinds, then each changed tool
// with one line per change, written for the people (and models) who call
// the API.
func Changelog(m *Manifest) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Changelog of %s\n\n", m.Collection)
	fmt.Fprintf(&b, "Versions: %s. Every change below is semantics-preserving: `manifest.json` translates any valid call of an older version into the current one, and every response back.\n", strings.Join(m.Versions(), " → "))
	for i := len(m.Steps) - 1; i >= 0; i-- {
		writeStep(&b, &m.Steps[i])
	}
	return b.Bytes()
}

func writeStep(b *bytes.Buffer, s *Step) {
	fmt.Fprintf(b, "\n## %s (from %s)\n\n", s.To, s.From)
	fmt.Fprintf(b, "Drawn with seed %d; operators %s.\n\n", s.Seed, strings.Join(opRates(s), ", "))
	counts := map[string]int{}
	for _, tc := range s.Tools {
		for _, c := range tc.Changes {
			counts[c.Op]++
		}
	}
	if len(s.Tools) == 0 {
		b.WriteString("No tool changed.\n")
		return
	}
	fmt.Fprintf(b, "%d tools changed.\n\n| change | count |\n| --- | --- |\n", len(s.Tools))
	for _, op := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(b, "| %s | %d |\n", op, counts[op])
	}
	for _, tc := range s.Tools {
		b.WriteString("\n### ")
		if tc.Name != tc.Tool {
			fmt.Fprintf(b, "`%s` → `%s`\n\n", tc.Tool, tc.Name)
		} else {
			fmt.Fprintf(b, "`%s`\n\n", tc.Tool)
		}
		for _, c := range tc.Changes {
			fmt.Fprintf(b, "- %s\n", describe(&c, s))
		}
		if tc.Stub != "" {
			if tc.StubListed {
				fmt.Fprintf(b, "- `%s` stays documented as deprecated; it answers 410 Gone pointing to `%s` (strict mode) or forwards to it with a warning (compat mode).\n", tc.Stub, tc.Name)
			} else {
				fmt.Fprintf(b, "- Calls to the old `%s` answer 410 Gone pointing to `%s` (strict mode) or are forwarded with a warning (compat mode).\n", tc.Stub, tc.Name)
			}
		}
	}
}

func opRates(s *Step) []string {
	out := make([]string, len(s.Operators))
	for i, o := range s.Operators {
		out[i] = fmt.Sprintf("%s (rate %g)", o, s.Rates[o])
	}
	return out
}

// describe says what one change means for a caller.
func describe(c *Change, s *Step) string {
	switch c.Op {
	case OpRenameTool:
		return fmt.Sprintf("**Renamed** `%s` → `%s` (%s).", c.From, c.To, c.Rule)
	case OpEndpoint:
		return fmt.Sprintf("**Endpoint** `%s` → `%s` (%s).", endpointString(c.OldEndpoint), endpointString(c.NewEndpoint), c.Rule)
	case OpRenameParam:
		return fmt.Sprintf("**Parameter renamed** `%s` → `%s` (%s).", c.Param, c.To, c.Rule)
	case OpRetype:
		ex := "`\"3\"`, not `3`"
		if c.FromType == "boolean" {
			ex = "`\"true\"`, not `true`"
		} else if c.FromType == "string" {
			ex = "a JSON " + c.ToType + ", not a string"
		}
		return fmt.Sprintf("**Type** of `%s`: %s → %s (send %s).", c.Param, c.FromType, c.ToType, ex)
	case OpEnumCase:
		var parts []string
		for _, p := range c.Values {
			if string(p.From) != string(p.To) {
				parts = append(parts, fmt.Sprintf("%s → %s", p.From, p.To))
			}
		}
		return fmt.Sprintf("**Enum values** of `%s` now %s case: %s.", c.Param, c.Rule, strings.Join(parts, ", "))
	case OpMakeOptional:
		return fmt.Sprintf("**Now optional** `%s`; when left out it defaults to %s.", c.Param, showValue(c.NewValue))
	case OpMakeRequired:
		return fmt.Sprintf("**Now required** `%s` (leaving it out used to mean %s).", c.Param, showValue(c.OldValue))
	case OpFlipDefault:
		return fmt.Sprintf("**Default** of `%s`: %s → %s; calls that leave it out now get %s.", c.Param, showValue(c.OldValue), showValue(c.NewValue), showValue(c.NewValue))
	case OpNest:
		var parts []string
		for _, m := range c.Members {
			parts = append(parts, fmt.Sprintf("`%s` → `%s.%s`", m.Param, c.Param, m.Key))
		}
		return fmt.Sprintf("**Nested** into the object `%s` (%s): %s.", c.Param, c.Rule, strings.Join(parts, ", "))
	case OpRenameField:
		return fmt.Sprintf("**Response field** `%s` → `%s` (%s).", fieldPath(c.Path, c.From), fieldPath(c.Path, c.To), c.Rule)
	case OpErrorFormat:
		return fmt.Sprintf("**Error format** now `%s` with %s codes, e.g. %q.", c.Style.Template, c.Style.CodeStyle, c.Style.Render(toolenv.StatusInvalidArguments, "missing required argument city"))
	case OpDeprecate:
		return fmt.Sprintf("**Deprecated**: replaced by `%s` in %s.", c.To, s.To)
	}
	return c.Op
}

func endpointString(e *Endpoint) string {
	if e == nil {
		return ""
	}
	return strings.TrimSpace(e.Method + " " + e.BaseURL + e.Path)
}

func fieldPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
