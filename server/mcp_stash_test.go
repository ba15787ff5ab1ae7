package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	toolenv "github.com/toolenv/toolenv"
)

// TestMCPLargeArgumentsReadAhead: a tools/call whose arguments are read
// ahead of the SDK (MCPArguments) is answered as the SDK's own reading
// answers it — the same text, status, warnings and problems, for a
// lenient and a strict tool, small and large arguments, through the Go
// SDK's client — and leaves nothing kept once answered; an argument a
// client names like the handle object is an argument like any other.
func TestMCPLargeArgumentsReadAhead(t *testing.T) {
	stash := NewMCPArguments()
	with := httptest.NewServer(boundsServerWith(t, stash))
	t.Cleanup(with.Close) // after the clients' sessions close
	without := httptest.NewServer(boundsServerWith(t, nil))
	t.Cleanup(without.Close)
	ctx := context.Background()
	connect := func(url string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	a, b := connect(with.URL), connect(without.URL)
	call := func(cs *mcp.ClientSession, tool string, args map[string]any) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		meta, _ := json.Marshal(res.Meta["toolenv/warnings"])
		return fmt.Sprintf("error=%v %s warnings=%s", res.IsError, resultText(t, res), meta)
	}
	for _, n := range []int{0, 3, 1500, 6000} {
		for _, tc := range []struct{ tool, first string }{{"search_for_newsapi", "q"}, {"get_book", "isbn"}} {
			args := map[string]any{tc.first: fmt.Sprintf("%013d", n)}
			for i := range n {
				args[fmt.Sprintf("k%07d", i)] = json.Number("1")
			}
			got, want := call(a, tc.tool, args), call(b, tc.tool, args)
			// The backend counts the arguments it got: the answers must
			// agree, including that count.
			if got != want {
				t.Fatalf("%s with %d more keys: read ahead %.400q, through the SDK %.400q", tc.tool, n, got, want)
			}
		}
	}
	stash.mu.Lock()
	left := len(stash.args)
	stash.mu.Unlock()
	if left != 0 {
		t.Errorf("%d arguments kept after their requests", left)
	}
	forged := map[string]any{"q": "x", mcpStashKey: "00112233445566778899aabbccddeeff"}
	if got, want := call(a, "search_for_newsapi", forged), call(b, "search_for_newsapi", forged); got != want || !strings.Contains(got, mcpStashKey) {
		t.Errorf("an argument named like the handle: %q, want %q", got, want)
	}
}

// FuzzMCPStash: whatever the body, the one stash passes on is JSON
// exactly when it was, and arguments it keeps are the body's own.
func FuzzMCPStash(f *testing.F) {
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":"` + strings.Repeat("x", mcpStashMin) + `","b":[1,{"c":"}"}]}}}`
	f.Add([]byte(big))
	f.Add([]byte(strings.Replace(big, `"b"`, `"b`, 1)))
	f.Add([]byte(strings.Replace(big, `"method":"tools/call"`, `"method":"tools/call","params":5`, 1)))
	f.Add([]byte(`{"method":"tools/call","params":{"arguments":[` + strings.Repeat("1,", mcpStashMin) + `1]}}`))
	f.Add([]byte(strings.Replace(big, `"name":"t"`, `"name":"known"`, 1)))
	f.Add([]byte(strings.Replace(strings.Replace(big, `"name":"t"`, `"name":"known"`, 1), `"b"`, `"a"`, 1)))
	f.Fuzz(func(t *testing.T, body []byte) {
		a := NewMCPArguments()
		// A tool named "known" has its arguments parsed as they are
		// read: the body passed on must be JSON exactly when it was
		// all the same.
		a.resolveWith(func(name string) (*toolenv.Schema, bool) { return nil, name == "known" })
		out, release := a.stash(body)
		if json.Valid(out) != json.Valid(body) {
			t.Fatalf("stash turned a body that is JSON: %v into one that is: %v", json.Valid(body), json.Valid(out))
		}
		if bytes.Equal(out, body) {
			release()
			return
		}
		params, _ := memberSpan(out, "params")
		rel, _ := memberSpan(out[params[0]:params[1]], "arguments")
		args, ok := a.take(out[params[0]+rel[0] : params[0]+rel[1]])
		if !ok {
			t.Fatalf("the stashed arguments are not found again: %.200s", out)
		}
		var orig struct {
			Params struct {
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if json.Valid(body) {
			if err := json.Unmarshal(body, &orig); err != nil {
				return // a duplicate member or a type the struct refuses: nothing to compare
			}
			want, err := toolenv.CanonicalizeJSON(orig.Params.Arguments)
			got, err2 := toolenv.CanonicalizeJSON(args.text)
			if err == nil && err2 == nil && !bytes.Equal(want, got) {
				t.Fatalf("kept arguments differ from the body's")
			}
		}
		release()
	})
}

// BenchmarkMCPArgumentsReadAhead compares the server CPU per KB of an MCP
// tools/call of 1 MB of small undocumented keys with its arguments read
// ahead of the SDK (MCPArguments) and through the SDK, every call a cache
// miss.
//
//	go test ./server -run '^$' -bench MCPArgumentsReadAhead -benchtime 10x
func BenchmarkMCPArgumentsReadAhead(b *testing.B) {
	for _, with := range []bool{true, false} {
		var stash *MCPArguments
		if with {
			stash = NewMCPArguments()
		}
		h := boundsServerWith(b, stash)
		send := mcpCall("search_for_newsapi")
		b.Run(fmt.Sprintf("read-ahead=%v", with), func(b *testing.B) {
			args := manyKeys(`"q"`, 1<<20/15)
			at := bytes.IndexByte(args, ':') + 3
			var cpu time.Duration
			var body int64
			for i := 0; b.Loop(); i++ {
				copy(args[at:], fmt.Sprintf("%012d", i+1)) // a cache miss each time
				req := send(b, h, args)
				body += req.ContentLength
				rec := httptest.NewRecorder()
				start := cpuTime()
				h.ServeHTTP(rec, req)
				cpu += cpuTime() - start
				if rec.Code != http.StatusOK {
					b.Fatalf("%d %.300s", rec.Code, rec.Body)
				}
			}
			b.ReportMetric(float64(cpu.Microseconds())/(float64(body)/1024), "cpu-µs/KB")
		})
	}
}

// TestMCPArgumentsParsedOnRead: the arguments of a known tool are parsed
// as the body is read, once, and that parse stands for them (the same
// members as a parse of their text, a duplicate key included); those of
// a tool the resolver does not know are only checked and kept as text,
// for the tool handler to parse.
func TestMCPArgumentsParsedOnRead(t *testing.T) {
	pad := strings.Repeat("x", mcpStashMin)
	for _, tc := range []struct {
		name, tool, args string
		parsed           bool
	}{
		{"known tool", "known", `{"a":"` + pad + `","b":[1,{"c":"}"}]}`, true},
		{"unknown tool", "other", `{"a":"` + pad + `","b":[1,{"c":"}"}]}`, false},
		{"duplicate key", "known", `{"a":"` + pad + `","a":1,"b":"` + pad + `"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewMCPArguments()
			a.resolveWith(func(name string) (*toolenv.Schema, bool) { return nil, name == "known" })
			body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tc.tool + `","arguments":` + tc.args + `}}`)
			out, release := a.stash(body)
			defer release()
			if bytes.Equal(out, body) {
				t.Fatalf("not read ahead: %.200s", out)
			}
			params, _ := memberSpan(out, "params")
			rel, _ := memberSpan(out[params[0]:params[1]], "arguments")
			kept, ok := a.take(out[params[0]+rel[0] : params[0]+rel[1]])
			if !ok || string(kept.text) != tc.args {
				t.Fatalf("kept %v %.80q, want the arguments' text", ok, kept.text)
			}
			if got := kept.parsed != nil; got != tc.parsed {
				t.Fatalf("parsed on read: %v, want %v", got, tc.parsed)
			}
			if kept.parsed == nil {
				return
			}
			want, err := toolenv.ParseArgsText([]byte(tc.args), nil, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(kept.parsed.Args) != len(want.Args) || kept.parsed.Args["a"] != want.Args["a"] {
				t.Errorf("the parse on read differs from the text's: %d vs %d members", len(kept.parsed.Args), len(want.Args))
			}
		})
	}
}
