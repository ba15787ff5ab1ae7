package toolbench

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	toolenv "github.com/toolenv/toolenv"
)

var urlCases = []string{
	"https://weather.p.rapidapi.com/v1/current",
	"http://h.example",
	"http://h.example/",
	"https://h.example:8443/a/b_c-d.e~f",
	"https://H.Example/Path",
	"https://h.example/a%20b",
	"https://h.example/a b",
	"https://h.example/a?q=1",
	"https://h.example/a#frag",
	"https://user@h.example/a",
	"https://[::1]:80/a",
	"https://h.example:/a",
	"https://h.example:80:90/a",
	"https://:80/a",
	"https:///a",
	"HTTPS://h.example/a",
	"ftp://h.example/a",
	"https://h.example/{id}",
	"https://h.exämple/a",
	"https://h.example/ä",
	"https://h.example/a;b=c",
	"https://h.example//double",
	"https://h.example/..",
	"not a url",
	"/relative/path",
	"",
}

// urlRef is what the builder took from url.Parse before splitPlainURL.
func urlRef(raw string) (base, path string) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", ""
	}
	return u.Scheme + "://" + u.Host, u.EscapedPath()
}

// TestSplitPlainURL: every URL the fast split takes, it splits as
// url.Parse does, and the builder's url gives url.Parse's answer for all.
func TestSplitPlainURL(t *testing.T) {
	b := newBuilder(1)
	fast := 0
	for _, c := range urlCases {
		checkURL(t, b, c)
		if _, _, ok := splitPlainURL(c); ok {
			fast++
		}
	}
	if fast < 5 {
		t.Errorf("only %d URLs split the fast way", fast)
	}
}

func checkURL(t *testing.T, b *builder, raw string) {
	t.Helper()
	wb, wp := urlRef(raw)
	if base, path, ok := splitPlainURL(raw); ok && (base != wb || path != wp) {
		t.Fatalf("splitPlainURL(%q) = %q, %q; url.Parse gives %q, %q", raw, base, path, wb, wp)
	}
	if base, path := b.url(raw); base != wb || path != wp {
		t.Fatalf("url(%q) = %q, %q; url.Parse gives %q, %q", raw, base, path, wb, wp)
	}
}

func FuzzSplitPlainURL(f *testing.F) {
	for _, c := range urlCases {
		f.Add(c)
	}
	b := newBuilder(1)
	f.Fuzz(func(t *testing.T, raw string) { checkURL(t, b, raw) })
}

// TestFirstRunes: firstRunes cuts as string([]rune(s)[:n]) does, invalid
// bytes included.
func TestFirstRunes(t *testing.T) {
	for _, s := range []string{"", "abc", "héllo wörld", "日本語のテキスト", "a\xffb\xc3", "\xe6\x97", strings.Repeat("é", 300) + "\xff"} {
		for n := 0; n <= utf8.RuneCountInString(s)+1; n++ {
			r := []rune(s)
			want := string(r[:min(n, len(r))])
			if got := firstRunes(s, n); got != want {
				t.Errorf("firstRunes(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}

// TestJSONText: the encoder-free paths give MarshalJSONNoHTML's text.
func TestJSONText(t *testing.T) {
	for _, v := range []any{"plain", "with \"quote\"", "<html>&", "é", []string{}, []string{"a", "b_c"}, []string{"a", "x\"y"}, []string{"<"}, 12, nil} {
		want, err := toolenv.MarshalJSONNoHTML(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonText(v); got != string(want) {
			t.Errorf("jsonText(%#v) = %s, want %s", v, got, want)
		}
	}
}

// TestMethod: the documented method, upper-cased, GET when none.
func TestMethod(t *testing.T) {
	b := newBuilder(1)
	for in, want := range map[string]string{"": "GET", "get": "GET", "Get": "GET", "post": "POST", "PATCH": "PATCH", "purge": "PURGE", "ß": strings.ToUpper("ß")} {
		if got := b.method(in); got != want {
			t.Errorf("method(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDocKey: the key the builder makes from the names it standardized
// is the doc's Key, for names that standardize in every way.
func TestDocKey(t *testing.T) {
	b := newBuilder(1)
	names := []string{"Data", "Sports, Games", "a/b c", "x__y", "Get User!", "getUser", "天气 API", "é", "", "long " + strings.Repeat("name ", 20), "1st"}
	for _, cat := range names {
		for _, tool := range names {
			for _, api := range names {
				d := &APIDoc{CategoryName: cat, ToolName: tool, APIName: api}
				b.tool(d)
				if b.docKey != d.Key() {
					t.Fatalf("%q %q %q: builder's key %q, Key() %q", cat, tool, api, b.docKey, d.Key())
				}
			}
		}
	}
}
