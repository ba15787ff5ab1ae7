package server

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/toolbench"
)

// genVirtualBody writes a /virtual request body of the shapes clients
// send and of many they should not: members in any order, repeated or
// unknown, values of every JSON type, escapes, non-UTF-8 bytes, lone
// surrogates, tool_input as a string holding JSON (valid or not), an
// object or other values, a byte-order mark, trailing data, truncation.
func genVirtualBody(r *rand.Rand) []byte {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	ws := func() string { return pick("", "", "", " ", "\n  ", "\t", "\r\n") }
	str := func() string {
		if r.IntN(4) > 0 {
			return pick(`"Education"`, `"Folio Books"`, `"getBooks"`, `""`, "\"caf\u00e9 \xff\"")
		}
		return pick(`"Education"`, `"Folio Books"`, `"getBooks"`, `""`, `"caf\u00e9"`, `"tab\tin"`, `"esc\"aped"`, "\"raw \xff byte\"",
			`"\ud800"`, `"é"`, `"chat_with_user"`, `"a\/b"`)
	}
	inner := func() string {
		return pick(`{}`, `{"q": "x"}`, `{"b": 1, "a": "2"}`, `{"n": 1.50, "t": true, "z": null, "l": [1, "x"]}`, `{"a": 1, "a": 2}`,
			` {"k": "v"} `, `{"s": "\u00e9\ud83d\ude00"}`, `{"s": "\ud800"}`, `{"x": NaN}`, `{"x": 1e999}`, `[1]`, `"str"`, `{"a":`, `not json`, ``, `  `, `{"o": {"p": [{}]}}`)
	}
	toolInput := func() string {
		switch r.IntN(6) {
		case 0:
			return inner()
		case 1:
			return pick(`null`, `1`, `true`, `[]`, `"`)
		}
		b, _ := json.Marshal(inner())
		return string(b)
	}
	value := func(name string) string {
		switch {
		case name == "tool_input":
			return toolInput()
		case name == "toolenv_meta":
			return pick("true", "false", "null", `"yes"`, "1")
		case r.IntN(8) == 0:
			return pick("null", "1", "true", "[]", "{}", `{"x": "y"}`)
		}
		return str()
	}
	names := []string{"category", "tool_name", "api_name", "tool_input", "strip", "toolbench_key"}
	if r.IntN(4) == 0 {
		names = append(names, "toolenv_meta")
	}
	r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	if r.IntN(4) == 0 {
		names = names[:len(names)-1-r.IntN(2)] // some members missing
	}
	switch r.IntN(8) {
	case 0:
		names = append(names, names[r.IntN(len(names))]) // repeated
	case 1:
		names = append(names, pick("extra", "tool\\u005finput", "Tool_Name"))
	}
	var b strings.Builder
	if r.IntN(20) == 0 {
		b.WriteString("\xef\xbb\xbf")
	}
	b.WriteString(ws() + "{")
	for i, n := range names {
		if i > 0 {
			b.WriteString(ws() + "," + ws())
		}
		fmt.Fprintf(&b, `%s"%s"%s:%s%s`, ws(), n, ws(), ws(), value(n))
	}
	b.WriteString(ws() + "}" + ws())
	out := b.String()
	switch r.IntN(30) {
	case 0:
		out = out[:r.IntN(len(out))]
	case 1:
		out += pick("x", "{}", ",")
	}
	return []byte(out)
}

// TestDecodeVirtualFastAsGeneral: on generated bodies, whatever the fast
// decoder accepts it decodes exactly as DecodeVirtualRequest does (the
// request, the arguments, the error result) with the same exact key as
// toolbench.ToolInputKey; and it accepts the plain shape StableToolBench
// clients send.
func TestDecodeVirtualFastAsGeneral(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 6))
	accepted := 0
	const n = 20000
	keyed := 0
	for i := range n {
		body := genVirtualBody(r)
		// The handler parses the arguments of a tool_input with an
		// exact key after a miss in memory, so such a tool_input must
		// parse: its errors would otherwise come in another order.
		if plain, ok := decodeVirtualPlain(body); ok {
			if _, keyOK := toolbench.ToolInputKeyOf(plain.toolInput); keyOK {
				keyed++
				if full, ok := decodeVirtualFast(body); !ok || full.res != nil {
					t.Fatalf("body %d %q: its tool_input has an exact key but does not parse: %v %+v", i, body, ok, full.res)
				}
			}
		}
		fast, ok := decodeVirtualFast(body)
		if !ok {
			continue
		}
		accepted++
		req, args, res := DecodeVirtualRequest(body)
		if !reflect.DeepEqual(fast.req, req) || !reflect.DeepEqual(fast.args, args) || !reflect.DeepEqual(fast.res, res) {
			t.Fatalf("body %d %q:\nfast    %+v %v %+v\ngeneral %+v %v %+v", i, body, fast.req, fast.args, fast.res, req, args, res)
		}
		k1, ok1 := toolbench.ToolInputKeyOf(fast.toolInput)
		k2, ok2 := toolbench.ToolInputKey(body)
		if k1 != k2 || ok1 != ok2 {
			t.Fatalf("body %d %q: key %q %v, ToolInputKey %q %v", i, body, k1, ok1, k2, ok2)
		}
	}
	if accepted < n/20 {
		t.Fatalf("the fast decoder took %d of %d generated bodies; the generator no longer makes plain ones", accepted, n)
	}
	if keyed < n/40 {
		t.Fatalf("only %d of %d generated bodies had an exact key", keyed, n)
	}
	t.Logf("fast decoder took %d of %d bodies, %d with an exact key", accepted, n, keyed)
	for _, body := range []string{
		`{"category": "Education", "tool_name": "Folio Books", "api_name": "getBooks", "tool_input": "{\"q\": \"x\"}", "strip": "", "toolbench_key": ""}`,
		`{"api_name":"getBooks","strip":"","tool_input":"{}","tool_name":"Folio Books","category":"Education","toolbench_key":"","toolenv_meta":true}`,
		`{"category": "Education", "tool_name": "Folio Books", "api_name": "getBooks", "tool_input": ""}`,
	} {
		if _, ok := decodeVirtualFast([]byte(body)); !ok {
			t.Errorf("the fast decoder does not take the plain body %s", body)
		}
	}
}

// TestKeyMemoAsToolInputKeyOf: the memo returns what
// toolbench.ToolInputKeyOf returns, for inputs seen again, for more
// inputs than it holds, and for inputs too long to keep.
func TestKeyMemoAsToolInputKeyOf(t *testing.T) {
	var m keyMemo
	r := rand.New(rand.NewPCG(3, 4))
	inputs := []string{`"{\"q\": \"x\"}"`, `"{\"b\": 1, \"a\": \"2\"}"`, `null`, `""`, `"not json"`, `{"o": 1}`, `"\ud800"`,
		`"{\"long\": \"` + strings.Repeat("y", maxKeyInput) + `\"}"`}
	for i := range maxKeys + 100 {
		inputs = append(inputs, fmt.Sprintf(`"{\"n\": %d, \"s\": \"%x\"}"`, i, r.Uint64()))
	}
	for range 2 {
		for _, raw := range append([][]byte{nil, {}}, func() (bs [][]byte) {
			for _, in := range inputs {
				bs = append(bs, []byte(in))
			}
			return bs
		}()...) {
			in := string(raw)
			k, ok := m.of(raw)
			wk, wok := toolbench.ToolInputKeyOf(raw)
			if k != wk || ok != wok {
				t.Fatalf("%s: memo %q %v, ToolInputKeyOf %q %v", in, k, ok, wk, wok)
			}
		}
	}
	if len(m.keys) > maxKeys {
		t.Fatalf("the memo holds %d inputs, over its %d", len(m.keys), maxKeys)
	}
}
