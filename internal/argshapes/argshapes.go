// Package argshapes makes the large arguments the cost benchmarks send
// (issue 29: CPU per KB of request body, "however the bytes are
// shaped"): members of one of the shapes in Names, appended until an object
// holds about as many bytes as asked.
package argshapes

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Names are the shapes Members writes: many small keys, objects nested
// 64 deep, long strings with escapes and multi-byte characters, long
// arrays of numbers; arrays of small objects, strings of \u escapes
// (surrogate pairs among them), numbers not in canonical form (1.50e-3,
// 0.00010, 7E2), small keys out of order, one key repeated, members far
// apart in white space, and the most members a byte can hold (keys of
// two to five characters, no spaces); the most objects a byte can hold
// (empty ones and one-element arrays, alternating), and small objects
// each different and out of order.
var Names = []string{"keys", "deep", "strings", "arrays", "objects", "escapes", "numbers", "shuffled", "repeated", "spaces", "tiny", "empty", "small"}

// Members appends to b, after whatever b holds (an object's opening
// brace and first member), members of the shape named, each after a comma,
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
		case "objects":
			fmt.Fprintf(b, `, "o%03d": [`, i)
			for j := range 4096 {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(b, `{"a": %d, "b": "x"}`, j%3)
			}
			b.WriteByte(']')
		case "escapes":
			fmt.Fprintf(b, `, "e%03d": "`, i)
			for j := 0; j < 64<<10/32; j++ {
				b.WriteString(`\u00e9\u65e5\ud83d\ude00\\\/\"`)
			}
			b.WriteByte('"')
		case "numbers":
			fmt.Fprintf(b, `, "n%03d": [`, i)
			for j := range 8 << 10 {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(b, "%d.50e-3,0.000%d0,%dE2", j, j%9+1, j%100)
			}
			b.WriteByte(']')
		case "shuffled":
			fmt.Fprintf(b, `, "x%07d": 1`, (i*7919)%1000003)
		case "repeated":
			b.WriteString(`, "r": 1`)
		case "spaces":
			fmt.Fprintf(b, `,%s"w%05d" :  1`, strings.Repeat(" ", 1000), i)
		case "tiny":
			b.WriteString(`,"_`) // "_": never the caller's first member
			b.WriteString(strconv.FormatInt(int64(i), 36))
			b.WriteString(`":1`)
		case "empty":
			b.WriteString(`,"_`)
			b.WriteString(strconv.FormatInt(int64(i), 36))
			if i%2 == 0 {
				b.WriteString(`":{}`)
			} else {
				b.WriteString(`":[`)
				b.WriteString(strconv.Itoa(i % 10))
				b.WriteString(`]`)
			}
		case "small":
			fmt.Fprintf(b, `,"_%s":{"b":%d,"a":[%d]}`, strconv.FormatInt(int64(i), 36), i, i%7)
		default:
			panic("argshapes: no shape " + shape)
		}
	}
}
