package score

import (
	"errors"
	"testing"

	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/internal/pyfmt"
)

// FuzzDecodeBFCL: any model text decodes to calls, or fails as BFCL's
// decoder fails (decoder_failed), or is reported as not reproduced —
// never a panic — and what decodes goes through BFCL's checker.
func FuzzDecodeBFCL(f *testing.F) {
	for _, s := range []string{
		"[restaurant_search.find_closest(location=\"Boston\", amenities=[\"Patio\"])]\n",
		"```json\n[route.estimate_time(start_location=\"SF\", stops=[\"a\", 'b'])]\n```",
		"[f(a=-1, b=2.5e-3, c=True, d=None, e={'k': [1, (2, 3)]}, g=h.i(j=1), k=x[0], l=1+2*3, m=...)]",
		"f(a=1), g(b='x')",
		"[f(1, a=1, a=2)]", "[f(**kw)]", "[{1, 2}]", "[f(a=b'x')]", "[f(a=f'x{y}')]", "[f(a=lambda x: x)]",
		"[f(a='\\u00e9\\x41\\N{DASH}')]", "[f(a=0x1F, b=1_000, c=07)]", "I cannot help with that.", "",
	} {
		f.Add(s)
	}
	funcs := []metrics.BFCLFunction{{Name: "f", Params: map[string]metrics.BFCLParam{"a": {Type: "string"}}, Required: []string{"a"}}}
	answers := []any{pyfmt.Dict{{Key: "f", Value: pyfmt.Dict{{Key: "a", Value: []any{"x", ""}}}}}}
	f.Fuzz(func(t *testing.T, text string) {
		out, err := DecodeBFCL(text, BFCLFormatPython)
		if err != nil {
			var de *BFCLDecodeError
			var ue *BFCLUnsupportedError
			if !errors.As(err, &de) && !errors.As(err, &ue) {
				t.Fatalf("%q: %T %v", text, err, err)
			}
			return
		}
		if _, ok := out.([]any); !ok {
			t.Fatalf("%q decoded to %T", text, out)
		}
		if _, err := metrics.BFCLCheck("simple", funcs, out, answers, metrics.BFCLOptions{}); err != nil {
			var ie *metrics.BFCLInputError
			if !errors.As(err, &ie) {
				t.Fatalf("%q: checker: %v", text, err)
			}
		}
	})
}
