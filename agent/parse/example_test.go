package parse_test

import (
	"fmt"

	"github.com/toolenv/toolenv/agent/parse"
)

func ExampleCalls() {
	r, err := parse.Calls(`Sure, here you go: [get_zip_codes(district_name="Fresno Unified", charter_school=1)]`, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range r.Calls {
		fmt.Println(r.Format, c.Name, c.Args["district_name"], c.Args["charter_school"])
	}
	_, err = parse.Calls("To find the card I would first look at the rulings.", nil)
	fmt.Println(err != nil)
	// Output:
	// embedded get_zip_codes Fresno Unified 1
	// true
}

func ExampleReAct() {
	s, _ := parse.ReAct("Thought: I need the schools.\nAction: get_schools\nAction Input: {\"county\": \"Alameda\"}\nObservation: (imagined)")
	fmt.Println(s.Action, s.Input["county"])
	// Output: get_schools Alameda
}
