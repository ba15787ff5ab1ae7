package structural_test

import (
	"fmt"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping/structural"
)

// Compare two providers of the current weather: the alignment pairs their
// arguments (one of them nested) and response fields.
func ExampleMatcher_Compare() {
	c, err := toolenv.ReadCollection("../testdata/world")
	if err != nil {
		panic(err)
	}
	m := structural.New(c.Tools, nil, structural.Options{})
	mp := m.Compare("world/skylark_current_weather", "world/nimbus_get_current_conditions")
	for _, p := range mp.Inputs {
		fmt.Printf("argument %s → %s (%s)\n", p.From, p.To, p.Reason)
	}
	for _, p := range mp.Outputs[:2] {
		fmt.Printf("response %s → %s (%s)\n", p.From, p.To, p.Reason)
	}
	// Output:
	// argument city → location.city_name (description)
	// argument units → unit_system (description)
	// response city → location_name (description)
	// response temperature → temp (synonym)
}
