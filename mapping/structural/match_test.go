package structural

import (
	"context"
	"fmt"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping"
)

func world(t testing.TB) *toolenv.Collection {
	t.Helper()
	c, err := toolenv.ReadCollection("../testdata/world")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func pairs(ps []mapping.FieldPair) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.From+"="+p.To)
	}
	return strings.Join(out, " ")
}

func TestAllFindsTheAlternatives(t *testing.T) {
	c := world(t)
	m := New(c.Tools, nil, Options{})
	got, err := m.All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]*mapping.Mapping{}
	for _, mp := range got {
		byKey[mp.Key()] = mp
		if err := mp.Validate(); err != nil {
			t.Errorf("invalid mapping: %v", err)
		}
	}
	want := []struct {
		a, b    string
		inputs  string // oriented from a
		outputs string
	}{
		{"world/skylark_current_weather", "world/nimbus_get_current_conditions",
			"city=location.city_name units=unit_system",
			"city=location_name temperature=temp condition=sky humidity=relative_humidity wind=wind_speed"},
		{"world/search_books", "world/find_titles",
			"q=searchTerm limit=maxResults",
			"results[].isbn=items[].isbn13 results[].title=items[].name results[].author=items[].writer total=count"},
		{"world/convert_currency", "world/exchange_money",
			"from=source_currency to=target_currency amount=qty",
			"result=converted rate=exchange_rate"},
	}
	for _, w := range want {
		mp := byKey[mapping.PairKey(w.a, w.b)]
		if mp == nil {
			t.Errorf("no mapping %s ⇄ %s", w.a, w.b)
			continue
		}
		if mp.From != w.a {
			mp = mp.Reverse()
		}
		if got := pairs(mp.Inputs); got != w.inputs {
			t.Errorf("%s inputs = %s\nwant %s", w.a, got, w.inputs)
		}
		if got := pairs(mp.Outputs); got != w.outputs {
			t.Errorf("%s outputs = %s\nwant %s", w.a, got, w.outputs)
		}
	}
	// The forecast is not the current weather.
	if mp := byKey[mapping.PairKey("world/skylark_current_weather", "world/nimbus_get_forecast")]; mp != nil {
		t.Errorf("current weather mapped to the forecast: %+v", mp)
	}
}

func TestSpecialisationsGetFixedArguments(t *testing.T) {
	c := world(t)
	m := New(c.Tools, nil, Options{})
	tests := []struct {
		from, to string
		fixed    string
		inputs   string
	}{
		{"world/select_data_greater_than_equal_to", "world/filter_data", "condition=greater_than_equal_to", "data_source=data_source key_name=key_name value=value"},
		{"world/sort_data_descending", "world/sort_data", "ascending=false", "data_source=data_source key_name=key_name"},
	}
	for _, tt := range tests {
		t.Run(tt.from, func(t *testing.T) {
			mp := m.Compare(tt.from, tt.to)
			if mp == nil || mp.Score < 0.55 {
				t.Fatalf("mapping = %+v", mp)
			}
			var fixed []string
			for k, v := range mp.Fixed {
				fixed = append(fixed, fmt.Sprintf("%s=%v", k, v))
			}
			if strings.Join(fixed, " ") != tt.fixed || len(mp.When) != 0 {
				t.Fatalf("fixed = %v, when = %v", mp.Fixed, mp.When)
			}
			if got := pairs(mp.Inputs); got != tt.inputs {
				t.Fatalf("inputs = %s", got)
			}
			back := m.Compare(tt.to, tt.from)
			if len(back.When) != 1 || len(back.Fixed) != 0 {
				t.Fatalf("reverse: when = %v, fixed = %v", back.When, back.Fixed)
			}
		})
	}
}

func TestAssign(t *testing.T) {
	tests := []struct {
		score [][]float64
		want  string
	}{
		{[][]float64{{0.9, 0.8}, {0.85, 0.1}}, "[1 0]"}, // greedy would take 0.9 and leave 0.1
		{[][]float64{{0.1, 0.9, 0.2}}, "[1]"},
		{[][]float64{{0.5}, {0.9}, {0.1}}, "[-1 0 -1]"},
		{[][]float64{}, "[]"},
	}
	for _, tt := range tests {
		if got := fmt.Sprint(assign(tt.score)); got != tt.want && !(tt.want == "[]" && got == "[]") {
			t.Errorf("assign(%v) = %s, want %s", tt.score, got, tt.want)
		}
	}
}

func TestBetweenVersionsIsOneToOne(t *testing.T) {
	c := world(t)
	// v2: every tool renamed and its first argument renamed; descriptions
	// kept, as drift keeps them.
	v2 := make([]*toolenv.Tool, 0, len(c.Tools))
	for _, tl := range c.Tools {
		n := tl.Clone()
		n.Name = "v2_" + tl.Name
		n.Title = ""
		if names := n.Input.Names(); len(names) > 0 {
			p := n.Input.Properties[names[0]]
			n.Input.DeleteProp(names[0])
			n.Input.SetProp(names[0]+"_value", p)
		}
		v2 = append(v2, n)
	}
	c2 := toolenv.NewCollection("world2", "demo", v2)
	all := append(append([]*toolenv.Tool(nil), c.Tools...), c2.Tools...)
	m := New(all, nil, Options{})
	got, err := m.Between(context.Background(), "world", "world2")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(c.Tools) {
		t.Fatalf("%d mappings for %d tools", len(got), len(c.Tools))
	}
	for _, mp := range got {
		_, from, _ := toolenv.SplitToolID(mp.From)
		if mp.To != "world2/v2_"+from {
			t.Errorf("%s mapped to %s", mp.From, mp.To)
		}
	}
}

func TestNeighboursStrengthenCrossAPIPairs(t *testing.T) {
	c := world(t)
	// Pretend the weather and book operations of each provider are
	// neighbours: the weather pair's neighbours (the book pair) match, so
	// it is strengthened; the sibling data tools are not.
	nb := map[string][]string{
		"world/skylark_current_weather":       {"world/search_books"},
		"world/search_books":                  {"world/skylark_current_weather"},
		"world/nimbus_get_current_conditions": {"world/find_titles"},
		"world/find_titles":                   {"world/nimbus_get_current_conditions"},
		"world/sort_data":                     {"world/filter_data"},
		"world/sort_data_descending":          {"world/select_data_greater_than_equal_to"},
	}
	plain, err := New(c.Tools, nil, Options{}).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	boosted, err := New(c.Tools, nil, Options{Neighbours: func(id string) []string { return nb[id] }}).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	score := func(ms []*mapping.Mapping, a, b string) (float64, bool) {
		for _, m := range ms {
			if m.Key() == mapping.PairKey(a, b) {
				_, g := m.Signals["graph"]
				return m.Score, g
			}
		}
		return 0, false
	}
	before, _ := score(plain, "world/skylark_current_weather", "world/nimbus_get_current_conditions")
	after, used := score(boosted, "world/skylark_current_weather", "world/nimbus_get_current_conditions")
	if !used || after <= before {
		t.Fatalf("weather pair: %.3f → %.3f (graph used: %v)", before, after, used)
	}
	if _, used := score(boosted, "world/sort_data", "world/sort_data_descending"); used {
		t.Fatal("siblings were strengthened by their own neighbours")
	}
}
