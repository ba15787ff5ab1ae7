package pyfmt_test

import (
	"encoding/json"
	"fmt"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

// StableToolBench keys its cache by str(tool_input): a map is written
// with sorted keys, a Dict in its order.
func ExampleRepr() {
	args := map[string]any{"query": "it's", "limit": json.Number("5"), "exact": true}
	fmt.Println(pyfmt.Repr(args))
	doc := pyfmt.Dict{{Key: "name", Value: "search"}, {Key: "tags", Value: pyfmt.Tuple{"a"}}}
	fmt.Println(pyfmt.Repr(doc))
	// Output:
	// {'exact': True, 'limit': 5, 'query': "it's"}
	// {'name': 'search', 'tags': ('a',)}
}

func ExampleParse() {
	key, _ := pyfmt.Parse(`{'query': 'messi', 'rate': 1e-05}`, pyfmt.ParseOptions{FloatValues: true})
	fmt.Println(key)
	calls, _ := pyfmt.Parse(`[search(query="messi", limit=5)]`, pyfmt.ParseOptions{Calls: true})
	c := calls.([]any)[0].(*pyfmt.Call)
	fmt.Println(c.Name, c.Order, c.Keywords["limit"])
	// Output:
	// map[query:messi rate:1e-05]
	// search [query limit] 5
}

func ExampleParseLoose() {
	v, _, truncated, _ := pyfmt.ParseLoose(`{'error': '', 'response': {"items": [1, 2`, pyfmt.LooseOptions{KeepPartial: true})
	fmt.Println(pyfmt.Dumps(v), truncated)
	// Output:
	// {"error": "", "response": {"items": [1, 2]}} true
}

func ExampleJSONDumps() {
	s, _ := pyfmt.JSONDumps([]byte(`{"city":"Zürich","temp":21.50}`))
	fmt.Println(s)
	// Output:
	// {"city": "Z\u00fcrich", "temp": 21.5}
}
