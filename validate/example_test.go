package validate_test

import (
	"fmt"
	"slices"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/validate"
)

// ExampleValidator_ArgsSorted validates a call of many undocumented
// arguments whose keys the call already knows in order (its cache key
// was written from the arguments' text): the warning names the first
// few without a pass over them all.
func ExampleValidator_ArgsSorted() {
	in := toolenv.ObjectSchema()
	in.SetProp("q", &toolenv.Schema{Type: "string"})
	var text strings.Builder
	text.WriteString(`{"q": "news"`)
	for i := range 100 {
		fmt.Fprintf(&text, `, "k%03d": %d`, i, i)
	}
	text.WriteString("}")
	args, _ := toolenv.ParseArgs([]byte(text.String()), in)
	call := &toolenv.Call{Args: args}
	call.ArgsFromText(args, []byte(text.String()))
	call.CanonicalOf(args) // the cache key, written from the text
	keys, ok := call.SortedKeys(args)
	sorted := slices.Collect(keys)
	fmt.Println(ok, len(sorted), sorted[0], sorted[len(sorted)-1])
	var v validate.Validator
	out := v.ArgsSorted(in, args, keys, true)
	fmt.Println(out.Warnings)
	// Output:
	// true 101 k000 q
	// [100 arguments are not documented (passed on as given): `k000`, `k001`, `k002`, `k003`, `k004` and 95 more]
}
