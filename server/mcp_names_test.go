package server

import (
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func namedColl(name string, tools ...string) *toolenv.Collection {
	ts := make([]*toolenv.Tool, len(tools))
	for i, n := range tools {
		ts[i] = &toolenv.Tool{Name: n, Input: toolenv.ObjectSchema()}
	}
	return toolenv.NewCollection(name, "test", ts)
}

func TestMCPToolNames(t *testing.T) {
	long := strings.Repeat("x", 70)
	tests := []struct {
		name   string
		colls  []*toolenv.Collection
		naming MCPNaming
		want   map[string]string // tool ID → MCP name
	}{
		{"one collection keeps plain names", []*toolenv.Collection{namedColl("demo", "a", "b")}, MCPNamesAuto,
			map[string]string{"demo/a": "a", "demo/b": "b"}},
		{"a shared name is prefixed in every collection", []*toolenv.Collection{namedColl("bird-rest", "get_users", "x"), namedColl("bird-slot", "get_users")}, MCPNamesAuto,
			map[string]string{"bird-rest/get_users": "bird-rest__get_users", "bird-slot/get_users": "bird-slot__get_users", "bird-rest/x": "x"}},
		{"prefixed always", []*toolenv.Collection{namedColl("demo", "a")}, MCPNamesPrefixed,
			map[string]string{"demo/a": "demo__a"}},
		{"invalid characters become underscores", []*toolenv.Collection{namedColl("my.api v2", "list pets")}, MCPNamesPrefixed,
			map[string]string{"my.api v2/list pets": "my_api_v2__list_pets"}},
		{"a literal prefixed name does not collide", []*toolenv.Collection{namedColl("a", "b"), namedColl("c", "a__b", "b")}, MCPNamesAuto,
			map[string]string{"a/b": "a__b", "c/a__b": "a__b_2", "c/b": "c__b"}},
		{"long names keep 64 bytes and stay distinct", []*toolenv.Collection{namedColl("c", long+"1", long+"2")}, MCPNamesAuto,
			map[string]string{"c/" + long + "1": mcpFit(long + "1"), "c/" + long + "2": mcpFit(long + "2")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MCPToolNames(tt.colls, tt.naming)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			seen := map[string]bool{}
			for id, want := range tt.want {
				n := got[id]
				if n != want {
					t.Errorf("%s: got %q, want %q", id, n, want)
				}
				if len(n) > mcpMaxName || mcpSanitize(n) != n || seen[n] {
					t.Errorf("%s: name %q is invalid or repeated", id, n)
				}
				seen[n] = true
			}
		})
	}
	if a, b := mcpFit(long+"1"), mcpFit(long+"2"); a == b || len(a) != mcpMaxName {
		t.Errorf("mcpFit: %q, %q", a, b)
	}
}

func TestParseMCPNaming(t *testing.T) {
	for in, want := range map[string]MCPNaming{"": MCPNamesAuto, "auto": MCPNamesAuto, "Prefixed": MCPNamesPrefixed} {
		if got, err := ParseMCPNaming(in); err != nil || got != want || got.String() != strings.ToLower(want.String()) {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	if _, err := ParseMCPNaming("plain"); err == nil || !strings.Contains(err.Error(), "auto or prefixed") {
		t.Errorf("err = %v", err)
	}
}
