package upstream

import (
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/toolbench"
)

// proxyNames returns the category, tool and API names StableToolBench's
// server sends to the RapidAPI proxy for t: the standardized category, the
// standardized tool name and change_name(standardize(api name))
// (StableToolBench server/main.py prepare_tool_name_and_url and the
// "data" dict of get_virtual_response). The ToolBench loader records
// them in Tool.Meta ("std_category", "std_tool", "api_name"); they are
// derived from the tool's fields when it did not.
func proxyNames(t *toolenv.Tool) (category, tool, api string) {
	category = t.Meta["std_category"]
	if category == "" {
		category = toolbench.StandardizeCategory(t.Category)
	}
	tool = t.Meta["std_tool"]
	if tool == "" {
		tool = toolbench.Standardize(t.Group)
	}
	api = t.Meta["api_name"]
	if api == "" {
		orig := t.Title
		if orig == "" {
			orig = strings.TrimSuffix(t.Name, "_for_"+tool)
		}
		api = toolbench.APIName(orig)
	}
	return category, tool, api
}
