package toolbench

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Standardize is ToolBench's standardize(): every character that is not an
// ASCII letter or digit, '_', '^' or a CJK ideograph becomes '_' (its
// regular expression, [^\u4e00-\u9fa5^a-z^A-Z^0-9^_], keeps '^' by
// accident; so does this), runs of '_' collapse,
// the result is lower-cased and trimmed of '_', and a leading digit gets a
// "get_" prefix.
func Standardize(s string) string {
	if isStandard(s) {
		return s // the common case on the request path: no allocation
	}
	var b strings.Builder
	b.Grow(len(s))
	lastUnderscore := false
	for _, r := range s {
		keep := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' || r == '^' || (r >= 0x4e00 && r <= 0x9fa5)
		if !keep {
			r = '_'
		}
		if r == '_' {
			if lastUnderscore {
				continue
			}
			lastUnderscore = true
		} else {
			lastUnderscore = false
		}
		// Python's str.lower() after the substitution: only ASCII letters
		// remain besides CJK, which has no case.
		b.WriteRune(unicode.ToLower(r))
	}
	out := strings.Trim(b.String(), "_")
	if out != "" && out[0] >= '0' && out[0] <= '9' {
		out = "get_" + out
	}
	return out
}

// reserved are the names ToolBench prefixes with "is_" because they are
// Python keywords or clash with its generated code.
var reserved = map[string]bool{"from": true, "class": true, "return": true, "false": true, "true": true, "id": true, "and": true}

// ChangeName is ToolBench's change_name(): reserved words get "is_".
func ChangeName(name string) string {
	if reserved[name] {
		return "is_" + name
	}
	return name
}

// APIName is the standardized API name ToolBench's client sends:
// ChangeName(Standardize(api)).
func APIName(api string) string { return ChangeName(Standardize(api)) }

// ParamName is the standardized parameter name ToolBench's function JSON
// uses: ChangeName(Standardize(name)).
func ParamName(name string) string { return ChangeName(Standardize(name)) }

// StandardizeCategory is the category normalisation of StableToolBench's
// server: spaces, commas and slashes become '_', then "__" becomes "_"
// once.
func StandardizeCategory(c string) string {
	if !strings.ContainsAny(c, " ,/") && !strings.Contains(c, "__") {
		return c // the common case: already standard
	}
	b := []byte(c)
	for i, ch := range b {
		if ch == ' ' || ch == ',' || ch == '/' {
			b[i] = '_'
		}
	}
	return strings.Replace(string(b), "__", "_", -1)
}

// FunctionName is the name ToolBench gives an API's function:
// "<api>_for_<tool>", keeping the last 64 characters as ToolBench does.
func FunctionName(api, tool string) string {
	return lastChars(APIName(api)+"_for_"+Standardize(tool), 64)
}

// lastChars is Python's s[-n:]: the last n characters (not bytes) of s.
func lastChars(s string, n int) string {
	if len(s) <= n {
		return s // n bytes hold at most n characters
	}
	i := len(s)
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

// isStandard reports whether Standardize(s) == s: lower-case ASCII
// letters, digits, '_' and '^' only, no leading, trailing or doubled '_',
// and no leading digit.
func isStandard(s string) bool {
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '^':
		case c == '_':
			if s[i-1] == '_' {
				return false
			}
		default:
			return false
		}
	}
	return true
}
