package drift

import (
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func TestDeprecation(t *testing.T) {
	base := toolenv.NewCollection("c", "test", []*toolenv.Tool{
		mustTool(t, `{"name":"current_weather","binding":{"method":"GET","path":"/weather/current"},"input":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`),
		mustTool(t, `{"name":"list_books","input":{"type":"object"}}`),
	})
	d, err := Drift(NewLineage(base), Options{Seed: 1, Operators: []string{"deprecate"}, Rates: map[string]float64{"deprecate": 1}})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Lineage.Current
	for _, tc := range d.Step.Tools {
		if tc.Stub != tc.Tool || !tc.StubListed {
			t.Errorf("%+v: the old tool must stay, listed", tc)
		}
		old, succ := c.Tool(tc.Tool), c.Tool(tc.Name)
		if old == nil || succ == nil || old.Deprecated == nil || old.Deprecated.Successor != tc.Name || old.Hidden() {
			t.Fatalf("%s: stub %+v, successor %v", tc.Tool, old, succ)
		}
	}
	if s := c.Tool("list_books").Deprecated.Successor; s != "search_books" && s != "browse_books" && s != "enumerate_books" {
		t.Errorf("successor of list_books: %s", s)
	}
	if s := c.Tool("current_weather").Deprecated.Successor; s != "current_weather_v2" || c.Tool(s).Binding.Path == "/weather/current" {
		t.Errorf("successor of current_weather: %s at %s", s, c.Tool(s).Binding.Path)
	}
}
