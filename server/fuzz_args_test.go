package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
)

// fuzzArgsServer serves a bound collection whose tools declare every
// parameter type, in every place a binding puts one.
func fuzzArgsServer(f *testing.F) http.Handler {
	typed := toolenv.ObjectSchema()
	for name, typ := range map[string]string{"id": "string", "n": "integer", "x": "number", "b": "boolean", "o": "object", "z": "null", "h": "integer", "c": "boolean"} {
		typed.SetProp(name, &toolenv.Schema{Type: typ})
	}
	typed.SetProp("a", &toolenv.Schema{Type: "array", Items: &toolenv.Schema{Type: "integer"}})
	list := toolenv.ObjectSchema()
	list.SetProp("items", &toolenv.Schema{Type: "array"})
	c := toolenv.NewCollection("api", "openapi", []*toolenv.Tool{
		{Name: "getItem", Input: typed, Binding: &toolenv.Binding{Method: "GET", Path: "/items/{id}", In: map[string]string{"id": "path", "h": "header", "c": "cookie"}}},
		{Name: "putItem", Input: typed, Binding: &toolenv.Binding{Method: "PUT", Path: "/items/{id}", In: map[string]string{"id": "path", "h": "header", "c": "cookie"}}},
		{Name: "postList", Input: list, Binding: &toolenv.Binding{Method: "POST", Path: "/lists"}, Meta: map[string]string{"body_param": "items"}},
	})
	reg := invoke.NewRegistry()
	if err := reg.Add(c, toolenv.HandlerFunc(echoBackend)); err != nil {
		f.Fatal(err)
	}
	return New(Options{Pipeline: invoke.New(reg, invoke.Options{}), Registry: reg, MaxBodyBytes: 1 << 16})
}

// FuzzRESTArgs sends any path, query string, header, cookie and body to
// the REST routes (/tools/{collection}/{name}) and the tools' own bound
// routes: every answer is JSON and none is a server error or a panic;
// the arguments a call was served with canonicalize.
func FuzzRESTArgs(f *testing.F) {
	f.Add("PUT", "/items/7", "n=07&x=1e3&b=true&a=1&a=2&o=%7B%22k%22%3A1%7D&z=", "12", "yes", []byte(`{"n": 5, "extra": [1, {"d": null}]}`))
	f.Add("GET", "/tools/api/getItem", "id=a%2Fb&a=[1,2]&n=NaN&b=maybe&_feedback=x", "", "", []byte(nil))
	f.Add("POST", "/lists", "", "", "", []byte(`[1, "two", {"3": [4]}]`))
	f.Add("POST", "/tools/api/putItem", "", "x", "y", []byte(`{"id": "\ud800", "n": 1e999}`))
	f.Add("GET", "/items/%ZZ", "%zz=1&=&&", "\x00", "\xff", []byte(`not json`))
	h := fuzzArgsServer(f)
	f.Fuzz(func(t *testing.T, method, path, query, hdr, cookie string, body []byte) {
		switch method {
		case "GET", "PUT", "POST", "DELETE", "PATCH":
		default:
			method = "POST"
		}
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		u := &url.URL{Path: path, RawQuery: query}
		if p, err := url.PathUnescape(path); err == nil {
			u.Path, u.RawPath = p, path
		}
		req := &http.Request{Method: method, URL: u, Header: http.Header{}, Host: "127.0.0.1", RemoteAddr: "127.0.0.1:1000",
			Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
		req.Header.Set("Content-Type", "application/json")
		req.Header["H"] = []string{hdr}
		req.Header["Cookie"] = []string{"c=" + cookie}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s?%s: %d %s", method, path, query, rec.Code, rec.Body.Bytes())
		}
		if rec.Code != http.StatusMethodNotAllowed && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s %s?%s: %d, not JSON: %q", method, path, query, rec.Code, rec.Body.Bytes())
		}
		if rec.Code == 200 {
			var echo struct{ Args map[string]any }
			if err := toolenv.DecodeJSON(rec.Body.Bytes(), &echo); err != nil {
				t.Fatalf("the echo does not read back: %v", err)
			}
			if _, err := toolenv.Canonical(echo.Args); err != nil {
				t.Fatalf("served arguments do not canonicalize: %v", err)
			}
		}
	})
}

// FuzzConvertParam: a query-string value becomes a value of its declared
// type when it can be read as one and stays the string otherwise; the
// result always canonicalizes.
func FuzzConvertParam(f *testing.F) {
	for _, typ := range []string{"integer", "number", "boolean", "object", "null", "array", "string", ""} {
		f.Add(typ, "integer", "07", "1e3")
	}
	f.Add("array", "boolean", "[true, 1]", "false")
	f.Add("number", "", "-0.0e-0", "")
	f.Add("object", "", `{"a": {"b": [1e400]}}`, "")
	f.Fuzz(func(t *testing.T, typ, itemType, v1, v2 string) {
		ps := &toolenv.Schema{Type: typ}
		if typ == "array" {
			ps.Items = &toolenv.Schema{Type: itemType}
		}
		for _, vs := range [][]string{nil, {v1}, {v1, v2}} {
			got := convertParam(ps, vs)
			if len(vs) == 0 {
				if got != nil {
					t.Fatalf("no value converted to %v", got)
				}
				continue
			}
			if _, err := toolenv.Canonical(got); err != nil {
				t.Fatalf("%s %q converted to %#v, which does not canonicalize: %v", typ, vs, got, err)
			}
			switch x := got.(type) {
			case json.Number:
				if !toolenv.IsJSONNumber(string(x)) {
					t.Fatalf("%q converted to the number %q", vs, x)
				}
			case string:
				if typ != "array" && x != vs[len(vs)-1] {
					t.Fatalf("%q converted to another string %q", vs, x)
				}
			case []any:
				if typ != "array" {
					t.Fatalf("%s %q converted to an array", typ, vs)
				}
			}
		}
	})
}

// FuzzMCPArgs: tools/call arguments are a JSON object (or absent); any
// other input is a bad_request result with a message, never a panic; an
// object encoding/json reads is accepted with the same keys.
func FuzzMCPArgs(f *testing.F) {
	for _, s := range []string{`{"city": "Paris", "days": 3}`, `null`, ``, ` `, `[]`, `"x"`, `{"a": 1, "a": 2}`, `{"n": 1e999, "s": "\ud800"}`, `{"deep": [[[[[]]]]]}`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		args, res := mcpArgs(raw, nil)
		if res != nil {
			if args != nil || res.Status != toolenv.StatusBadRequest || res.Error == "" {
				t.Fatalf("refusal %+v with args %v", res, args)
			}
		} else {
			if args == nil {
				t.Fatal("accepted with no arguments")
			}
			if _, err := toolenv.Canonical(args); err != nil {
				t.Fatalf("accepted arguments do not canonicalize: %v", err)
			}
		}
		var std map[string]json.RawMessage
		if json.Unmarshal(raw, &std) == nil && std != nil && len(raw) < 4096 && bytes.Count(raw, []byte("[")) < 100 && bytes.Count(raw, []byte("{")) < 100 {
			if res != nil {
				t.Fatalf("encoding/json reads an object, refused: %s", res.Error)
			}
			if len(args) != len(std) {
				t.Fatalf("%d arguments, encoding/json reads %d", len(args), len(std))
			}
		}
	})
}
