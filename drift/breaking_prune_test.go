package drift

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/openapi"
)

// genRESTCollection generates a REST API whose tools share paths (GET
// and DELETE of one item), carry path, query and body parameters of
// every type, enums, defaults and nested objects, in groups with
// descriptions (the document's tags); with sessions, the document also
// has the session protocol's components.
func genRESTCollection(r *rand.Rand, n int, sessions bool) *toolenv.Collection {
	c := &toolenv.Collection{Name: "gen", Version: "v1", Description: "generated", Policy: toolenv.Policy{Sessions: sessions}}
	types := []string{"string", "integer", "number", "boolean"}
	for i := range n {
		res := fmt.Sprintf("res%d", i/2)
		method, path := "GET", fmt.Sprintf("/v1/%s/{id}/get-details", res)
		name := fmt.Sprintf("get_%s", res)
		if i%2 == 1 {
			method, path, name = pick(r, "DELETE", "POST", "PUT"), fmt.Sprintf("/v1/%s/{id}/get-details", res), fmt.Sprintf("change_%s", res)
		}
		in := &toolenv.Schema{Type: "object", Properties: map[string]*toolenv.Schema{}}
		in.SetProp("id", &toolenv.Schema{Type: "string", Description: "the item's id"})
		in.Required = []string{"id"}
		for k := range 1 + r.IntN(5) {
			p := &toolenv.Schema{Type: pick(r, types...), Description: fmt.Sprintf("parameter %d of %s", k, name)}
			switch r.IntN(4) {
			case 0:
				p = &toolenv.Schema{Type: "string", Enum: []any{"low", "high", "Medium"}}
			case 1:
				p.Default = map[string]any{"string": "x", "integer": 3, "number": 1.5, "boolean": true}[p.Type]
			case 2:
				p = &toolenv.Schema{Type: "object", Properties: map[string]*toolenv.Schema{}}
				p.SetProp("inner", &toolenv.Schema{Type: "integer"})
			}
			pn := fmt.Sprintf("p%d_%s", k, pick(r, "limit", "city", "date", "mode"))
			in.SetProp(pn, p)
			if r.IntN(3) == 0 {
				in.Required = append(in.Required, pn)
			}
		}
		out := &toolenv.Schema{Type: "object", Properties: map[string]*toolenv.Schema{}}
		out.SetProp("value", &toolenv.Schema{Type: pick(r, types...)})
		bindIn := map[string]string{"id": "path"}
		c.Tools = append(c.Tools, &toolenv.Tool{
			Name: name, Collection: c.Name, ID: toolenv.ToolID(c.Name, name), Description: "Does " + name + ".",
			Group: fmt.Sprintf("group%d", i%3), GroupDescription: fmt.Sprintf("The tools of group %d.", i%3),
			Input: in, Output: out, Binding: &toolenv.Binding{Method: method, Path: path, In: bindIn},
			Examples: []toolenv.Example{{Args: map[string]any{"id": "a1"}}},
		})
	}
	return c
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// TestBreakingPrunedEqualsWhole: leaving out of both documents the
// operations they hold alike changes nothing in oasdiff's report, on
// drifts of every size (a few tools changed, most of them) of the demo
// and of generated REST APIs with shared paths, tags and session
// components, over two steps; and the pruning does leave operations out.
func TestBreakingPrunedEqualsWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 3))
	dm, err := demo.Collection()
	if err != nil {
		t.Fatal(err)
	}
	bases := map[string]*toolenv.Collection{"demo": dm, "rest": genRESTCollection(r, 24, false), "rest-sessions": genRESTCollection(r, 16, true)}
	pruned, withChanges := 0, 0
	for name, base := range bases {
		for seed := uint64(1); seed <= 2; seed++ {
			for _, rate := range []float64{0.05, 0.3, 1} {
				rates := map[string]float64{}
				for _, op := range Operators() {
					rates[op.Name] = rate
				}
				l := NewLineage(base)
				for step := range 2 {
					d, err := Drift(l, Options{Seed: seed*10 + uint64(step), Rates: rates})
					if err != nil {
						t.Fatalf("%s seed %d rate %v step %d: %v", name, seed, rate, step, err)
					}
					whole, err := breaking(d.From, d.Lineage.Current, false)
					if err != nil {
						t.Fatal(err)
					}
					got, err := breaking(d.From, d.Lineage.Current, true)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, whole) {
						t.Fatalf("%s seed %d rate %v step %d: pruned report differs:\n got %s\nwant %s", name, seed, rate, step, mustJSON(got), mustJSON(whole))
					}
					if len(whole.Changes) > 0 {
						withChanges++
					}
					d1, d2 := openapi.Document(d.From, ""), openapi.Document(d.Lineage.Current, "")
					before := len(d1["paths"].(map[string]any))
					if err := pruneCommon(d1, d2); err != nil {
						t.Fatal(err)
					}
					if len(d1["paths"].(map[string]any)) < before {
						pruned++
					}
					l = d.Lineage
				}
			}
		}
	}
	t.Logf("%d documents pruned, %d reports with changes", pruned, withChanges)
	if pruned < 10 || withChanges < 10 {
		t.Errorf("the drifts tried pruned %d documents, and %d had changes: the comparison proves little", pruned, withChanges)
	}
}
