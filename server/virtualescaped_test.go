package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	toolenv "github.com/toolenv/toolenv"
)

// genArgsText writes the text of a call's arguments: most of the time a
// JSON object of values of every kind (strings with escapes, multi-byte,
// astral and non-UTF-8 characters, lone surrogates; numbers of every
// form; nested objects and arrays; repeated keys), sometimes another
// JSON value, and now and then broken at a random place.
func genArgsText(r *rand.Rand, b *bytes.Buffer) {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	ws := func() string { return pick("", "", "", " ", "\n\t", "\r\n ") }
	str := func() string {
		return pick(`"q"`, `"x"`, `""`, `"caf\u00e9"`, `"café"`, `"日本"`, `"a\"b"`, `"back\\slash"`, `"\ud83d\ude00"`, "\"\U0001F600\"",
			`"\ud800"`, `"\udc00x"`, "\"\xff\xfe\"", "\"\xed\xa0\x80\"", `"tab\tnew\nline"`, `"\/"`, `"\u0000"`, `"k"`, `"q"`)
	}
	num := func() string {
		return pick("0", "-0", "1", "-1", "1.50", "1e3", "1E-3", "-0.0e+00", "12345678901234567890", "1e400", "0.1", "3.14159")
	}
	var value func(depth int)
	value = func(depth int) {
		b.WriteString(ws())
		switch k := r.IntN(9); {
		case depth > 0 && k < 2:
			b.WriteByte('{')
			for i := range r.IntN(4) {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(ws() + str() + ws() + ":")
				value(depth - 1)
			}
			b.WriteString(ws() + "}")
		case depth > 0 && k < 4:
			b.WriteByte('[')
			for i := range r.IntN(4) {
				if i > 0 {
					b.WriteByte(',')
				}
				value(depth - 1)
			}
			b.WriteByte(']')
		case k < 6:
			b.WriteString(str())
		case k < 8:
			b.WriteString(num())
		default:
			b.WriteString(pick("true", "false", "null"))
		}
		b.WriteString(ws())
	}
	start := b.Len()
	if r.IntN(10) == 0 {
		value(2)
	} else {
		b.WriteString(ws() + "{")
		n := r.IntN(6)
		if r.IntN(40) == 0 {
			n = 600 + r.IntN(600) // over the exact key's limit and the parser's arena size
		}
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			if n > 6 {
				fmt.Fprintf(b, `"k%05d":`, i)
			} else {
				b.WriteString(ws() + str() + ws() + ":")
			}
			value(3)
		}
		b.WriteString("}" + ws())
	}
	if r.IntN(8) == 0 && b.Len() > start {
		at := start + r.IntN(b.Len()-start)
		text := bytes.Clone(b.Bytes()[at:])
		b.Truncate(at)
		switch r.IntN(3) {
		case 0: // cut short
		case 1:
			b.Write(text[1:]) // a byte left out
		case 2:
			b.WriteString(pick("{", "}", "[", "]", `"`, ",", ":", "\\", "x", "\x00"))
			b.Write(text[1:])
		}
	}
}

// escapeString writes text as a JSON string, escaping it the ways
// clients do and some they should not (see the cases).
func escapeString(r *rand.Rand, b *bytes.Buffer, text []byte) {
	hex := "%04x"
	if r.IntN(3) == 0 {
		hex = "%04X"
	}
	b.WriteByte('"')
	for i := 0; i < len(text); {
		c, size := utf8.DecodeRune(text[i:])
		raw := text[i : i+size]
		i += size
		if r.IntN(80) == 0 {
			b.WriteString([]string{`\ud800`, `\udfff`, `\ud800\u0041`, `\x`, `\u12g4`, `\u00`, "\x01", "\xff", `\/\\\"`, "\x7f"}[r.IntN(10)])
		}
		switch {
		case c == utf8.RuneError && size == 1:
			b.Write(raw) // not UTF-8: kept raw
		case c == '"' || c == '\\':
			if r.IntN(8) == 0 {
				fmt.Fprintf(b, `\u`+hex, c)
			} else {
				b.WriteByte('\\')
				b.WriteRune(c)
			}
		case c < 0x20:
			if e, ok := map[rune]string{'\n': `\n`, '\t': `\t`, '\r': `\r`, '\b': `\b`, '\f': `\f`}[c]; ok && r.IntN(3) > 0 {
				b.WriteString(e)
			} else {
				fmt.Fprintf(b, `\u`+hex, c)
			}
		case c == '/' && r.IntN(2) == 0:
			b.WriteString(`\/`)
		case c > 0xffff && r.IntN(2) == 0:
			c -= 0x10000
			fmt.Fprintf(b, `\u`+hex+`\u`+hex, 0xd800+(c>>10), 0xdc00+(c&0x3ff))
		case c <= 0xffff && r.IntN(12) == 0:
			fmt.Fprintf(b, `\u`+hex, c) // '{' as \u007b too
		default:
			b.Write(raw)
		}
	}
	b.WriteByte('"')
}

// genEscapedVirtualBody returns a /virtual body of the plain shape whose
// tool_input is a string holding generated arguments (genArgsText)
// escaped by escapeString, now and then broken at a random place of the
// body; or, a tenth of the time, one of genVirtualBody's.
func genEscapedVirtualBody(r *rand.Rand) []byte {
	if r.IntN(10) == 0 {
		return genVirtualBody(r)
	}
	var text, b bytes.Buffer
	genArgsText(r, &text)
	api := "search"
	if r.IntN(20) == 0 {
		api = []string{"nosuch", "chat_with_user"}[r.IntN(2)]
	}
	fmt.Fprintf(&b, `{"category": "News_Media", "tool_name": "newsapi", "api_name": "%s", "tool_input": `, api)
	escapeString(r, &b, text.Bytes())
	b.WriteString(`, "strip": ""}`)
	out := b.Bytes()
	if r.IntN(20) == 0 {
		at := r.IntN(len(out))
		out = append(out[:at:at], out[at+1:]...)
	}
	return out
}

// virtualOutcome is what the handler makes of a /virtual body on a cache
// miss, in the order it finds out: early is the answer given when the
// tool is unknown or a session refused (the request's tool_input error
// first, or none); req, args and res what the call is made with, and
// canon its cache key.
type virtualOutcome struct {
	early    *toolenv.Result
	req      *VirtualRequest
	args     map[string]any
	res      *toolenv.Result
	canon    string
	canonErr error
}

// oldVirtualDecode is the decode of a miss as it was before the content
// of a tool_input string was unescaped once and checked by the parse:
// ParseJSON's string copied, TrimSpace, CheckJSON before the tool is
// known, ParseArgs then. It is the reference virtualMissDecode is held to.
func oldVirtualDecode(body []byte, s *toolenv.Schema) virtualOutcome {
	vb := decodeVirtualDeferred(body)
	var content []byte
	if vb.pending {
		if vb.toolInput != nil {
			v, err := toolenv.ParseJSON(vb.toolInput)
			if str, ok := v.(string); err == nil && ok {
				raw := bytes.TrimSpace([]byte(str))
				if len(raw) > 0 && raw[0] == '{' && toolenv.CheckJSON(raw) == nil {
					content = raw
				}
			}
		}
		if content == nil {
			vb.finish(body, nil)
		}
	}
	out := virtualOutcome{early: vb.res, req: vb.req, args: vb.args, res: vb.res}
	if content != nil {
		args, err := toolenv.ParseArgs(content, s)
		if err != nil {
			out.res = &toolenv.Result{Status: toolenv.StatusInvalidArguments, Error: toolInputParseError + "tool_input is not valid JSON: " + err.Error(),
				Hint: toolInputHint, Source: toolenv.SourcePipeline}
		}
		out.args = args
	}
	out.canon, out.canonErr = canonOf(out.args, content)
	return out
}

// virtualMissDecode is the handler's decode of a miss now (check, settle
// for an early answer, finish).
func virtualMissDecode(body []byte, s *toolenv.Schema) virtualOutcome {
	vb := decodeVirtualDeferred(body)
	vb.check(body)
	early := vb // an answer before the arguments are parsed
	early.settle(body)
	vb.finish(body, s)
	out := virtualOutcome{early: early.res, req: vb.req, args: vb.args, res: vb.res}
	out.canon, out.canonErr = canonOf(vb.args, vb.content)
	return out
}

// canonOf is the cache key of a call with args, from the text of
// tool_input when there is one (Call.ArgsFromText), as the handler
// computes it.
func canonOf(args map[string]any, text []byte) (string, error) {
	if args == nil {
		return "", nil
	}
	c := &toolenv.Call{Args: args}
	if text != nil {
		c.ArgsFromText(args, text)
	}
	return c.CanonicalOf(args)
}

func checkVirtualMissAsBefore(t *testing.T, body []byte, s *toolenv.Schema) virtualOutcome {
	t.Helper()
	want := oldVirtualDecode(body, s)
	got := virtualMissDecode(body, s)
	if !reflect.DeepEqual(got.early, want.early) || !reflect.DeepEqual(got.req, want.req) || !reflect.DeepEqual(got.res, want.res) ||
		!reflect.DeepEqual(got.args, want.args) || got.canon != want.canon || fmt.Sprint(got.canonErr) != fmt.Sprint(want.canonErr) {
		t.Fatalf("body %.400q:\nnow    early %+v req %+v res %+v args %.200v key %.200q %v\nbefore early %+v req %+v res %+v args %.200v key %.200q %v",
			body, got.early, got.req, got.res, got.args, got.canon, got.canonErr, want.early, want.req, want.res, want.args, want.canon, want.canonErr)
	}
	return got
}

// TestVirtualMissDecodeAsBefore: over generated /virtual bodies whose
// tool_input strings hold arguments escaped every way (\u escapes of
// any character, surrogate pairs, lone surrogates, bytes that are not
// UTF-8, escaped quotes and backslashes, numbers of every form, breakage
// at a random place of the arguments or of the body), the miss path
// decodes as it did before it unescaped tool_input once and left its
// check to the parse: the same request, arguments, error (the same
// early one when the tool is unknown) and cache key; with and without a
// schema.
func TestVirtualMissDecodeAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 10))
	in := toolenv.ObjectSchema()
	in.SetProp("q", &toolenv.Schema{Type: "string"})
	in.SetProp("k", &toolenv.Schema{Type: "object"})
	counts := map[string]int{}
	const n = 12000
	for range n {
		body := genEscapedVirtualBody(r)
		for _, s := range []*toolenv.Schema{nil, in} {
			o := checkVirtualMissAsBefore(t, body, s)
			switch {
			case o.early != nil && o.early.Status == toolenv.StatusBadRequest:
				counts["bad request"]++
			case o.early != nil:
				counts["tool_input error before the tool"]++
			case o.res != nil:
				counts["error after the tool"]++ // not seen: a content that is JSON parses
			default:
				counts["arguments"]++
			}
		}
	}
	t.Logf("%v", counts)
	for _, want := range []string{"bad request", "tool_input error before the tool", "arguments"} {
		if counts[want] < n/50 {
			t.Fatalf("the generator made too few bodies of outcome %q: %v", want, counts)
		}
	}
}

// FuzzVirtualToolInput holds the miss path's decode of a tool_input
// string to the one before (TestVirtualMissDecodeAsBefore's reference),
// for any text sent as tool_input, escaped as encoding/json escapes it
// or as given.
func FuzzVirtualToolInput(f *testing.F) {
	for _, s := range []string{`{"q": "x"}`, `{"s": "\ud800", "é": "\ud83d\ude00", "n": [1e400, -0.0]}`, `{"a": 1, "a": 2}`,
		"{\"k\": \"\xff\"}", `{"q": "x"`, ` {"k": {"p": [{}]}} `, `[1]`, `"\u12g4"`, `"{\"q\": 1}"`, `"\ud800\u0041"`} {
		f.Add(s, true)
		f.Add(s, false)
	}
	in := toolenv.ObjectSchema()
	in.SetProp("q", &toolenv.Schema{Type: "string"})
	f.Fuzz(func(t *testing.T, text string, marshal bool) {
		lit := text // sent as given: a string literal or not
		if marshal {
			b, _ := json.Marshal(text)
			lit = string(b)
		}
		body := []byte(`{"category": "News_Media", "tool_name": "newsapi", "api_name": "search", "tool_input": ` + lit + `}`)
		for _, s := range []*toolenv.Schema{nil, in} {
			checkVirtualMissAsBefore(t, body, s)
		}
	})
}

// TestVirtualToolInputErrorsFirst: a tool_input string that is not JSON
// is reported before an unknown tool and before a session is looked up
// or issued, however long it is, as it always was; and a long one that
// is JSON is served with its arguments.
func TestVirtualToolInputErrorsFirst(t *testing.T) {
	srv, _ := newTestServerMax(t, 1<<20)
	long := strings.Repeat(`, \"k\": \"v\"`, 1000) // past the exact key's limit
	for _, tc := range []struct {
		name, api, input string
		hdr              []string
		wantErr          string
	}{
		{"unknown tool", "nosuch", `"{\"q\": }"`, nil, "Tool input parse error"},
		{"unknown tool, long", "nosuch", `"{\"q\": \"x\"` + long + `"`, nil, "Tool input parse error"},
		{"unknown tool, long, valid", "nosuch", `"{\"q\": \"x\"` + long + `}"`, nil, "has no API"},
		{"unknown session", "search", `"{\"q\": \"x\"` + long + `"`, []string{SessionHeader, "never-issued"}, "Tool input parse error"},
		{"unknown session, valid", "search", `"{\"q\": \"x\"` + long + `}"`, []string{SessionHeader, "never-issued"}, "session"},
		{"bad escape in the body", "search", `"{\"q\": \x}"`, nil, ""},
		{"long, valid", "search", `"{\"q\": \"x\"` + long + `}"`, nil, "-"},
	} {
		body := `{"category": "News_Media", "tool_name": "newsapi", "api_name": "` + tc.api + `", "tool_input": ` + tc.input + `}`
		resp, raw := post(t, srv.URL+"/virtual", "application/json", body, tc.hdr...)
		var a struct {
			Error    string          `json:"error"`
			Response json.RawMessage `json:"response"`
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatalf("%s: %d %.300s", tc.name, resp.StatusCode, raw)
		}
		switch {
		case tc.wantErr == "":
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("%s: %d %.300s, want 400", tc.name, resp.StatusCode, raw)
			}
		case tc.wantErr == "-":
			if resp.StatusCode != http.StatusOK || a.Error != "" || !bytes.Contains(a.Response, []byte(`k`)) {
				t.Errorf("%s: %d %.300s, want the call served", tc.name, resp.StatusCode, raw)
			}
		default:
			text := a.Error + " " + string(a.Response)
			if resp.StatusCode != http.StatusOK || !strings.Contains(strings.ToLower(text), strings.ToLower(tc.wantErr)) {
				t.Errorf("%s: %d %.300s, want %q", tc.name, resp.StatusCode, raw, tc.wantErr)
			}
		}
		if resp.Header.Get(SessionHeader) != "" {
			t.Errorf("%s: a session was issued: %s", tc.name, resp.Header.Get(SessionHeader))
		}
	}
}
