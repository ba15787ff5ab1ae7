package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/store"
)

// TestBadUTF8KeepsItsOwnCacheKey: arguments that differ only in bytes
// that are not UTF-8 — a stray byte, a lone surrogate escape, U+FFFD —
// are different calls with different cached answers, over REST and
// /virtual, on a real SQLite store; each is then served from the cache
// as its own answer.
func TestBadUTF8KeepsItsOwnCacheKey(t *testing.T) {
	in := toolenv.ObjectSchema()
	in.SetProp("q", &toolenv.Schema{Type: "string"})
	tool := &toolenv.Tool{Name: "search", Category: "Data", Group: "Finder", Input: in}
	c := toolenv.NewCollection("c", "toolbench", []*toolenv.Tool{tool})
	c.Policy = toolenv.Policy{Validation: toolenv.ValidationLenient, Cache: true}
	var calls atomic.Int64
	reg := invoke.NewRegistry()
	if err := reg.Add(c, toolenv.HandlerFunc(func(ctx context.Context, call *toolenv.Call) *toolenv.Result {
		n := calls.Add(1)
		return &toolenv.Result{Status: toolenv.StatusOK, Body: json.RawMessage(`{"answer":` + strconv.FormatInt(n, 10) + `}`), Source: toolenv.SourceSimulator}
	})); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "cache.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv := httptest.NewServer(New(Options{Pipeline: invoke.New(reg, invoke.Options{Cache: st}), Registry: reg}))
	defer srv.Close()

	// The JSON text of q: the first two are one string (U+FFFD escaped
	// and as it is); every other is a string of its own.
	values := []string{`"a\ufffdb"`, "\"a\xef\xbf\xbdb\"", "\"a\xffb\"", "\"a\xfeb\"", `"a\ud800b"`, `"a\udc00b"`, `"a\ud800\ud800b"`, `"ab"`}
	distinct := len(values) - 1
	answers := map[string]string{}
	for round := range 2 {
		for i, v := range values {
			for _, front := range []string{"virtual", "rest"} {
				var body []byte
				var src string
				if front == "rest" {
					resp, b := post(t, srv.URL+"/tools/c/search", "application/json", `{"q": `+v+`}`)
					body, src = b, resp.Header.Get("X-Toolenv-Source")
				} else {
					resp, b := post(t, srv.URL+"/virtual", "application/json",
						`{"category": "Data", "tool_name": "Finder", "api_name": "search", "tool_input": {"q": `+v+`}}`)
					var w struct {
						Response json.RawMessage `json:"response"`
					}
					json.Unmarshal(b, &w)
					body, src = w.Response, resp.Header.Get("X-Toolenv-Source")
				}
				key := strconv.Itoa(i)
				if i == 1 {
					key = "0" // U+FFFD as it is is U+FFFD escaped
				}
				if prev, ok := answers[key]; ok {
					if string(body) != prev || src != string(toolenv.SourceCache) {
						t.Errorf("round %d %s q=%s: %s from %s, want the cached %s", round, front, v, body, src, prev)
					}
					continue
				}
				if src == string(toolenv.SourceCache) {
					t.Errorf("%s q=%s was served another input's cached answer %s", front, v, body)
				}
				answers[key] = string(body)
			}
		}
	}
	if n := calls.Load(); n != int64(distinct) {
		t.Fatalf("the backend answered %d calls for %d distinct inputs", n, distinct)
	}
}
