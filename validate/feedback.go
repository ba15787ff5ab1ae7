package validate

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	toolenv "github.com/toolenv/toolenv"
)

// Feedback renders validation problems at a feedback level:
//
//   - "none": a bare failure ("invalid arguments"), nothing to learn from;
//   - "terse": what is wrong, one clause per problem;
//   - "helpful" (and ""): what is wrong, plus a hint listing the valid
//     parameters with their types, requiredness and descriptions.
//
// It returns the error message and the hint.
func Feedback(level string, tool *toolenv.Tool, problems []toolenv.Problem) (msg, hint string) {
	if len(problems) == 0 {
		return "", ""
	}
	if level == toolenv.FeedbackNone {
		return "invalid arguments", ""
	}
	parts := make([]string, len(problems))
	for i, p := range problems {
		parts[i] = p.Message
	}
	msg = "invalid arguments: " + strings.Join(parts, "; ")
	if level == toolenv.FeedbackTerse || tool == nil {
		return msg, ""
	}
	return msg, ParamHelp(tool)
}

// ParamHelp describes a tool's parameters in one line each:
// "valid parameters of f: q (string, required): the query; limit (integer)".
func ParamHelp(tool *toolenv.Tool) string {
	in := tool.Input
	names := in.Names()
	if len(names) == 0 {
		return fmt.Sprintf("%s takes no parameters", tool.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "valid parameters of %s: ", tool.Name)
	for i, n := range names {
		if i > 0 {
			b.WriteString("; ")
		}
		p := in.Properties[n]
		b.WriteString(n)
		b.WriteString(" (")
		b.WriteString(describeType(p))
		if in.IsRequired(n) {
			b.WriteString(", required")
		}
		b.WriteString(")")
		if p != nil && p.Description != "" {
			b.WriteString(": ")
			b.WriteString(shorten(p.Description, 120))
		}
	}
	return b.String()
}

// shorten returns s if it has at most max bytes, else its first
// max-3 bytes or fewer, cut on a character boundary, and "…".
func shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max - 3
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// Suggest returns the candidate closest to name (same letters ignoring
// case and separators, else the smallest edit distance within a third of
// the name's length), or "".
func Suggest(name string, candidates []string) string {
	norm := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				b.WriteRune(unicode.ToLower(r))
			}
		}
		return b.String()
	}
	n := norm(name)
	best, bestD := "", len(n)/3+1
	for _, c := range candidates {
		cn := norm(c)
		if cn == n {
			return c
		}
		if d := distance(n, cn); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b (bytes).
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
