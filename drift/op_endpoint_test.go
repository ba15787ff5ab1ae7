package drift

import (
	"strings"
	"testing"
)

func TestEndpointEvolution(t *testing.T) {
	tool := mustTool(t, `{"name":"get_book","title":"Get book","binding":{"method":"GET","path":"/v1/books/{isbn}/get-details","base_url":"https://api.books.example"},
	 "input":{"type":"object","properties":{"isbn":{"type":"string"}},"required":["isbn"]}}`)
	seenRename, seenHost := false, false
	for seed := uint64(0); seed < 60; seed++ {
		cs, nt := planOp(t, "endpoint", tool, 1, seed, nil)
		b := nt.Binding
		if !strings.HasPrefix(b.Path, "/v2/books/{isbn}/") {
			t.Fatalf("seed %d: path %s, want the version bumped", seed, b.Path)
		}
		for _, c := range cs {
			if c.Op == OpRenameTool {
				seenRename = true
				verb := strings.Split(nt.Name, "_")[0]
				if !contains([]string{"fetch", "retrieve", "obtain"}, verb) || !strings.HasPrefix(strings.ToLower(nt.Title), verb) {
					t.Fatalf("seed %d: renamed to %s / %q", seed, nt.Name, nt.Title)
				}
				if !strings.HasSuffix(b.Path, "/"+verb+"-details") {
					t.Fatalf("seed %d: the path's action segment did not follow: %s", seed, b.Path)
				}
			}
		}
		if b.BaseURL != "https://api.books.example" {
			seenHost = true
			if b.BaseURL != "https://api-v2.books.example" {
				t.Fatalf("seed %d: host %s", seed, b.BaseURL)
			}
		}
	}
	if !seenRename || !seenHost {
		t.Errorf("over 60 seeds: action rename %v, host migration %v", seenRename, seenHost)
	}
	// Without a version segment the path moves under a prefix.
	_, nt := planOp(t, "endpoint", mustTool(t, `{"name":"weather","binding":{"method":"GET","path":"/weather"},"input":{"type":"object"}}`), 1, 1, nil)
	if nt.Binding.Path == "/weather" || !strings.HasSuffix(nt.Binding.Path, "/weather") {
		t.Errorf("prefix migration: %s", nt.Binding.Path)
	}
}

func TestActionRenameOfToolBenchTitle(t *testing.T) {
	tool := mustTool(t, `{"name":"get_quote_for_stocks","title":"Get Quote","group":"Stocks","meta":{"toolbench_name":"get_quote_for_stocks","api_name":"get_quote","function_description":"call get_quote_for_stocks"},"input":{"type":"object"}}`)
	for seed := uint64(0); seed < 10; seed++ {
		cs, nt := planOp(t, "endpoint", tool, 1, seed, nil)
		if len(cs) != 1 || cs[0].Op != OpRenameTool {
			t.Fatalf("seed %d: %s", seed, mustJSON(cs))
		}
		verb := strings.ToLower(strings.Fields(nt.Title)[0])
		if nt.Name != verb+"_quote_for_stocks" || nt.Meta["api_name"] != verb+"_quote" || nt.Meta["toolbench_name"] != nt.Name || !strings.Contains(nt.Meta["function_description"], nt.Name) {
			t.Fatalf("seed %d: %s %q %v", seed, nt.Name, nt.Title, nt.Meta)
		}
	}
}
