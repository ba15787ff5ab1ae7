package argshapes_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolenv/toolenv/internal/argshapes"
)

// TestMembersMakeValidObjectsOfTheSize: every shape closes into one
// valid JSON object of at least the size asked and not much more (one
// member past it at most), and adds nothing to an object already as
// large.
func TestMembersMakeValidObjectsOfTheSize(t *testing.T) {
	for _, shape := range argshapes.Names {
		for _, size := range []int{1, 1 << 10, 200 << 10} {
			var b bytes.Buffer
			b.WriteString(`{"q": "x"`)
			argshapes.Members(&b, shape, size)
			b.WriteByte('}')
			var m map[string]any
			if err := json.Unmarshal(b.Bytes(), &m); err != nil {
				t.Fatalf("%s/%d: %v", shape, size, err)
			}
			if b.Len() < size || b.Len() > size+200<<10 {
				t.Fatalf("%s/%d: %d bytes", shape, size, b.Len())
			}
			if size == 1 && len(m) != 1 || size > 1 && len(m) < 2 {
				t.Fatalf("%s/%d: %d members, want the first and one of the shape at least", shape, size, len(m))
			}
		}
	}
}

func ExampleMembers() {
	var b bytes.Buffer
	b.WriteString(`{"q": "x"`)
	argshapes.Members(&b, "keys", 40)
	b.WriteByte('}')
	fmt.Println(b.String())
	// Output: {"q": "x", "k0000000": 1, "k0000001": 1, "k0000002": 1}
}
