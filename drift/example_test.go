package drift_test

import (
	"fmt"

	"github.com/toolenv/toolenv/demo"
	"github.com/toolenv/toolenv/drift"
)

// A manifest translates a call written against an old version into the
// current one and back.
func ExampleManifest_Forward() {
	m := &drift.Manifest{Format: drift.ManifestFormat, Collection: "maps", BaseVersion: "v1", Version: "v2",
		Steps: []drift.Step{{From: "v1", To: "v2", Tools: []drift.ToolChange{{
			Tool: "get_places", Name: "fetch_places",
			Changes: []drift.Change{
				{Op: drift.OpRenameTool, From: "get_places", To: "fetch_places"},
				{Op: drift.OpRenameParam, Param: "q", To: "query"},
				{Op: drift.OpNest, Param: "position", Members: []drift.Member{{Param: "lat", Key: "lat"}, {Param: "lng", Key: "lon"}}},
			},
		}}}}}
	if err := m.Check(); err != nil {
		fmt.Println(err)
		return
	}
	name, args, _ := m.Forward("v1", "get_places", map[string]any{"q": "cafe", "lat": 48.85, "lng": 2.35})
	fmt.Println(name, args)
	base, back := m.Backward(name, args)
	fmt.Println(base, back)
	for _, r := range m.Alignments() {
		fmt.Printf("%s %s: %s → %s\n", r.Kind, r.Tool, r.Old, r.New)
	}
	// Output:
	// fetch_places map[position:map[lat:48.85 lon:2.35] query:cafe]
	// get_places map[lat:48.85 lng:2.35 q:cafe]
	// tool get_places: get_places → fetch_places
	// param get_places: lat → position.lat
	// param get_places: lng → position.lon
	// param get_places: q → query
}

// Drift makes the next version of a collection with seeded operators.
func ExampleDrift() {
	c, _ := demo.Collection()
	d, err := drift.Drift(drift.NewLineage(c), drift.Options{Seed: 1, Operators: []string{"type"}, Rates: map[string]float64{"type": 1}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Step.From, "→", d.Step.To)
	for _, tc := range d.Step.Tools {
		for _, ch := range tc.Changes {
			fmt.Println(tc.Name, ch.Op, ch.Param, ch.FromType, ch.ToType, ch.Rule)
		}
	}
	// Output:
	// v1 → v2
	// convert_currency retype amount number string number_to_string
	// convert_currency enum_case from   lower
	// convert_currency enum_case to   lower
	// current_weather enum_case units   upper
	// exchange_rates enum_case base   title
	// search_books retype limit integer string integer_to_string
	// weather_forecast retype days integer string integer_to_string
}
