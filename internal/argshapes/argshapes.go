// Package argshapes makes the large arguments the cost benchmarks send
// (issue 29: CPU per KB of request body, "however the bytes are
// shaped"): members of one of four shapes, appended until an object
// holds about as many bytes as asked.
package argshapes

import (
	"bytes"
	"fmt"
	"strings"
)

// Names are the shapes Members writes: many small keys, objects nested
// 64 deep, long strings with escapes and multi-byte characters, and long
// arrays of numbers.
var Names = []string{"keys", "deep", "strings", "arrays"}

// Members appends to b, after whatever b holds (an object's opening
// brace and first member), members of the shape named, each after ", ",
// until b holds at least size bytes. The caller closes the object. It
// panics on a shape not in Names: a benchmark's own mistake.
func Members(b *bytes.Buffer, shape string, size int) {
	for i := 0; b.Len() < size; i++ {
		switch shape {
		case "keys":
			fmt.Fprintf(b, `, "k%07d": 1`, i)
		case "deep":
			fmt.Fprintf(b, `, "d%05d": `, i)
			for j := range 64 {
				fmt.Fprintf(b, `{"n%d": `, j%10)
			}
			b.WriteString(`[1, "x", true]`)
			b.WriteString(strings.Repeat("}", 64))
		case "strings":
			fmt.Fprintf(b, `, "s%03d": "`, i)
			for j := 0; j < 64<<10/32; j++ {
				b.WriteString(`lorem ipsum é日本 \"quoted\"\n\t`)
			}
			b.WriteByte('"')
		case "arrays":
			fmt.Fprintf(b, `, "a%03d": [`, i)
			for j := range 16 << 10 {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(b, "%d.%d", j, j%7)
			}
			b.WriteByte(']')
		default:
			panic("argshapes: no shape " + shape)
		}
	}
}
