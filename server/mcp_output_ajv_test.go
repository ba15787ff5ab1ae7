package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolenv/toolenv/internal/ajvcompat"
	"github.com/toolenv/toolenv/internal/npmtest"
)

// The structured result of a tool with an outputSchema must be one the
// client accepts: toolenv checks each answer before it sends it, and this
// test holds that check to the TypeScript SDK's own validator (Ajv with
// ajv-formats, run in Node) on generated schemas and adversarial values.
// Whatever toolenv lets through, Ajv must accept; every schema toolenv
// lists, Ajv must compile.

// ajvStrings are the strings values are drawn from: valid and invalid
// examples of each format, and the characters where JavaScript's and
// Go's regular expressions differ.
var ajvStrings = []string{
	"", " ", "a", "abc", "ABC", "é", "a b", "a\u00a0b", "a\u2028b", "a\rb", "a\nb", "\t", "x\u3000", "日本",
	"a@b.org", "a@b", "a.b@c.de", "a..b@c.de", "a b@c.de", "@c.de", "ü@example.org", "a@[127.0.0.1]", "a+b@x-y.io", "a@-x.io",
	"2024-01-02T03:04:05Z", "2024-01-02T03:04:05", "2024-01-02t03:04:05z", "2024-01-02 03:04:05Z", "2024-13-02T00:00:00Z",
	"2024-02-29T12:00:00+01:00", "2023-02-29T12:00:00Z", "2016-12-31T23:59:60Z", "2016-12-31T23:59:60+01:00", "2024-01-02T03:04:05.123456789-0530",
	"2024-01-02", "2024-1-2", "2024-02-30", "0000-01-01", "03:04:05Z", "03:04:05", "24:00:00Z", "23:59:60Z", "12:00:00+24:00",
	"http://x", "http://x.org/p?q=1#f", "x", "mailto:a@b", "urn:isbn:123", "http:// bad", "http://[::1]:80/p", "//x.org/p", "/p/q", "a:b",
	"https://example.org", "https://10.0.0.1/x", "ftp://a.bc:21/", "http://localhost", "http://1.2.3.4", "https://user:pw@ex.am/ple",
	"123e4567-e89b-12d3-a456-426614174000", "urn:uuid:123e4567-e89b-12d3-a456-426614174000", "123e4567e89b12d3a456426614174000",
	"192.168.0.1", "256.1.1.1", "01.2.3.4", "1.2.3", "::1", "2001:db8::1", "fe80::1%eth0", "1::2::3",
	"example.org", "-a.org", "a_b.org", "a." + strings.Repeat("b", 63) + ".org", strings.Repeat("a.", 127) + "a", "x.",
	"P1D", "PT1H", "P", "PT", "P1W", "P1Y2M", "P1DT", "/a/b", "a/b", "~2", "/~0~1", "#/a", "#a", "0#", "1/a",
	"YWJj", "YWJjZA==", "YWJjZA=", "a\nYWJj", "!!!", "{x}", "{+x,y:3}", "{x", "%zz", "^\\d+$", "(?i)a", "a{", "[", "\\Z",
}

var ajvNumbers = []string{"0", "-1", "1.5", "3.0", "2147483647", "2147483648", "-2147483648", "-2147483649", "1e300", "9007199254740993", "1e400", "-0", "0.1", "10", "255"}

var ajvFormatsUsed = append(append([]string{}, ajvcompat.Formats...), "period", "semver", "iri", "made-up")

var ajvPatterns = []string{
	`^[a-z]+$`, `^\S+$`, `^.{2,5}$`, `\d{3}`, `^(?:ab)+$`, `^\w+@\w+$`, `^[^\s]+$`, `^\u00e9`, `^\p{L}+$`, `a{`, `(?i)abc`,
	`^(?=a)`, `[\s\d]+`, `^\/x$`, `x\-y`, `^[a\-z]$`, `^.$`, `^\s*$`, `\bab`, `^[\S]+$`, `^\x41`, `^\u{1F600}`, `^(a|b)*c$`, `}`,
}

// genOutputSchema makes a random object schema with properties of every
// kind toolenv documents.
func genOutputSchema(rng *rand.Rand, depth int) map[string]any {
	props := map[string]any{}
	var req []string
	for i := range 1 + rng.IntN(4) {
		name := fmt.Sprintf("p%d", i)
		props[name] = genProp(rng, depth)
		if rng.IntN(2) == 0 {
			req = append(req, name)
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(req) > 0 {
		s["required"] = req
	}
	if rng.IntN(4) == 0 {
		s["additionalProperties"] = false
	}
	return s
}

func genProp(rng *rand.Rand, depth int) map[string]any {
	var p map[string]any
	switch k := rng.IntN(7); {
	case k == 0 && depth < 2:
		p = genOutputSchema(rng, depth+1)
	case k == 1 && depth < 2:
		p = map[string]any{"type": "array", "items": genProp(rng, depth+1)}
		if rng.IntN(2) == 0 {
			p["minItems"], p["maxItems"] = 1, 3
		}
	case k == 2:
		p = map[string]any{"type": []string{"integer", "number"}[rng.IntN(2)]}
		if rng.IntN(2) == 0 {
			p["format"] = []string{"int32", "int64", "float", "double"}[rng.IntN(4)]
		}
		if rng.IntN(3) == 0 {
			p["minimum"], p["maximum"] = 0, 255
		}
	case k == 3:
		p = map[string]any{"type": "boolean"}
	case k == 4:
		p = map[string]any{"type": "string", "enum": []string{"a", "b", "é"}}
	default:
		p = map[string]any{"type": "string"}
		switch rng.IntN(3) {
		case 0:
			p["format"] = ajvFormatsUsed[rng.IntN(len(ajvFormatsUsed))]
		case 1:
			p["pattern"] = ajvPatterns[rng.IntN(len(ajvPatterns))]
		}
		if rng.IntN(4) == 0 {
			p["minLength"], p["maxLength"] = 1, 8
		}
	}
	if rng.IntN(6) == 0 {
		if t, ok := p["type"].(string); ok {
			p["type"] = []string{t, "null"}
		}
	}
	return p
}

// genValue makes a value for schema s: mostly of its shape, with
// adversarial leaves, missing and extra properties and wrong types.
func genValue(rng *rand.Rand, s map[string]any) any {
	if rng.IntN(12) == 0 {
		return []any{nil, "x", json.Number("1"), true, []any{}, map[string]any{}}[rng.IntN(6)]
	}
	t, _ := s["type"].(string)
	if ts, ok := s["type"].([]string); ok {
		t = ts[0]
	}
	switch t {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			if rng.IntN(5) > 0 {
				out[name] = genValue(rng, p.(map[string]any))
			}
		}
		if rng.IntN(5) == 0 {
			out["extra"] = "x"
		}
		return out
	case "array":
		var out []any
		for range rng.IntN(4) {
			out = append(out, genValue(rng, s["items"].(map[string]any)))
		}
		return out
	case "integer", "number":
		return json.Number(ajvNumbers[rng.IntN(len(ajvNumbers))])
	case "boolean":
		return rng.IntN(2) == 0
	}
	if e, ok := s["enum"].([]string); ok && rng.IntN(2) == 0 {
		return e[rng.IntN(len(e))]
	}
	return ajvStrings[rng.IntN(len(ajvStrings))]
}

func TestMCPOutputCheckAgreesWithAjv(t *testing.T) {
	tools := npmtest.Require(t)
	rng := rand.New(rand.NewPCG(7, 2026))
	type item struct {
		Schema json.RawMessage   `json:"schema"`
		Values []json.RawMessage `json:"values"`
		ours   []bool
	}
	var items []*item
	notListed := 0
	for range 400 {
		gs := genOutputSchema(rng, 0)
		raw, _ := json.Marshal(gs)
		o, err := compileOutput(mustSchema(t, string(raw)))
		if err != nil {
			notListed++
			continue
		}
		it := &item{Schema: o.schema}
		for range 12 {
			v, _ := json.Marshal(genValue(rng, gs))
			it.Values = append(it.Values, v)
			it.ours = append(it.ours, o.check(v) == nil)
		}
		items = append(items, it)
	}
	dir := tools.ScriptDir(t)
	in := filepath.Join(dir, "items.json")
	data, _ := json.Marshal(items)
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "ajv.mjs")
	src := `import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { readFileSync } from "node:fs";
const items = JSON.parse(readFileSync(process.argv[2], "utf8"));
const v = new AjvJsonSchemaValidator();
const out = items.map((it) => {
  let check;
  try { check = v.getValidator(it.schema); } catch (e) { return { compiled: false, error: String(e) }; }
  return { compiled: true, valid: it.values.map((x) => check(x).valid) };
});
console.log(JSON.stringify(out));
`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := tools.Script(ctx, script, in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ajv: %v", err)
	}
	var verdicts []struct {
		Compiled bool   `json:"compiled"`
		Error    string `json:"error"`
		Valid    []bool `json:"valid"`
	}
	if err := json.Unmarshal(out, &verdicts); err != nil || len(verdicts) != len(items) {
		t.Fatalf("%v: %d verdicts for %d schemas", err, len(verdicts), len(items))
	}
	values, accepted, stricter := 0, 0, 0
	for i, it := range items {
		v := verdicts[i]
		if !v.Compiled {
			t.Errorf("toolenv lists a schema Ajv does not compile (%s): %s", v.Error, it.Schema)
			continue
		}
		for j, ours := range it.ours {
			values++
			switch {
			case ours && !v.Valid[j]:
				t.Errorf("toolenv accepts what Ajv refuses: %s under %s", it.Values[j], it.Schema)
			case !ours && v.Valid[j]:
				stricter++
				if stricter <= 5 {
					t.Logf("stricter than Ajv: %s under %s", it.Values[j], it.Schema)
				}
			case ours:
				accepted++
			}
		}
	}
	t.Logf("%d schemas listed (%d not: patterns or constructs not checked alike), %d values: %d accepted by both, %d refused by toolenv only", len(items), notListed, values, accepted, stricter)
	if accepted < values/10 {
		t.Errorf("only %d of %d values conform: the generator no longer tests acceptance", accepted, values)
	}
}
