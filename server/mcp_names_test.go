package server

import (
	"math/rand/v2"
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

// TestMCPCatalogResolvesEveryName builds catalogs of random collections
// whose names collide, hold invalid characters, are long, or are
// literally another's prefixed name, and checks that every tool is
// reached by its MCP name, by its ID and by its prefixed name, wherever
// no other tool's MCP name (which wins) or alike prefixed name takes it.
func TestMCPCatalogResolvesEveryName(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	pool := []string{"a", "b", "a__b", "get users", "get_users", "get-users", "x.y", strings.Repeat("long", 20), strings.Repeat("long", 20) + "!", "ü", "c__d__e", "_", "-"}
	for round := range 200 {
		var colls []*toolenv.Collection
		collNames := map[string]bool{}
		for range 1 + r.IntN(3) {
			cn := pool[r.IntN(len(pool))]
			if collNames[cn] {
				continue
			}
			collNames[cn] = true
			var tools []string
			seen := map[string]bool{}
			for range 1 + r.IntN(6) {
				tn := pool[r.IntN(len(pool))]
				if !seen[tn] {
					seen[tn] = true
					tools = append(tools, tn)
				}
			}
			colls = append(colls, namedColl(cn, tools...))
		}
		for _, naming := range []MCPNaming{MCPNamesAuto, MCPNamesPrefixed} {
			cat := newMCPCatalog(colls, naming, 0)
			prefixed := map[string]int{}
			for _, e := range cat.entries {
				prefixed[mcpPrefixed(e.coll.Name, e.tool.Name)]++
			}
			for i := range cat.entries {
				e := &cat.entries[i]
				if got := cat.resolve(e.name); got != e {
					t.Fatalf("round %d (%v): MCP name %q resolves to %v, want %s", round, naming, e.name, got, e.tool.ID)
				}
				if other := cat.byName[e.tool.ID]; other == nil || other == e {
					if got := cat.resolve(e.tool.ID); got != e {
						t.Fatalf("round %d (%v): ID %q resolves to %v", round, naming, e.tool.ID, got)
					}
				}
				p := mcpPrefixed(e.coll.Name, e.tool.Name)
				if other := cat.byName[p]; (other == nil || other == e) && prefixed[p] == 1 {
					if got := cat.resolve(p); got != e {
						t.Fatalf("round %d (%v): prefixed name %q of %s resolves to %v", round, naming, p, e.tool.ID, got)
					}
				}
			}
		}
	}
}
