package upstream

import (
	"strings"
	"unicode"

	toolenv "github.com/toolenv/toolenv"
)

// proxyNames returns the category, tool and API names StableToolBench's
// server sends to the RapidAPI proxy for t: the standardized category, the
// standardized tool name and change_name(standardize(api name))
// (StableToolBench server/main.py prepare_tool_name_and_url and the
// "data" dict of get_virtual_response). The ToolBench loader records
// them in Tool.Meta ("std_category", "std_tool", "api_name"); names are
// derived from the tool's fields when it did not.
func proxyNames(t *toolenv.Tool) (category, tool, api string) {
	category = t.Meta["std_category"]
	if category == "" {
		category = standardizeCategory(t.Category)
	}
	tool = t.Meta["std_tool"]
	if tool == "" {
		tool = standardize(t.Group)
	}
	orig := t.Meta["api_name"]
	if orig == "" {
		orig = t.Title
	}
	if orig == "" {
		orig = strings.TrimSuffix(t.Name, "_for_"+tool)
	}
	api = changeName(standardize(orig))
	return category, tool, api
}

// standardizeCategory is StableToolBench's standardize_category: spaces,
// commas and slashes become '_', and "__" becomes "_" once.
func standardizeCategory(c string) string {
	s := strings.NewReplacer(" ", "_", ",", "_", "/", "_").Replace(c)
	return strings.ReplaceAll(s, "__", "_")
}

// standardize is StableToolBench's standardize (server/utils.py): every
// character outside [A-Za-z0-9_] and CJK U+4E00–U+9FA5 becomes '_', runs
// of '_' collapse, the result is lower-cased and trimmed of '_', and a
// leading digit gets a "get_" prefix.
func standardize(s string) string {
	var b strings.Builder
	prevUnderscore := false
	for _, r := range s {
		ok := r == '_' || r < unicode.MaxASCII && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') ||
			r >= 0x4e00 && r <= 0x9fa5 || r == '^' // the Python character class also lets '^' through
		if !ok {
			r = '_'
		}
		if r == '_' {
			if prevUnderscore {
				continue
			}
			prevUnderscore = true
		} else {
			prevUnderscore = false
		}
		b.WriteRune(unicode.ToLower(r))
	}
	out := strings.Trim(b.String(), "_")
	if out != "" && out[0] >= '0' && out[0] <= '9' {
		out = "get_" + out
	}
	return out
}

// changeName is StableToolBench's change_name: Python keywords and a few
// other names get an "is_" prefix.
func changeName(name string) string {
	switch name {
	case "from", "class", "return", "false", "true", "id", "and":
		return "is_" + name
	}
	return name
}
