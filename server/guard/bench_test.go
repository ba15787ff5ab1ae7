package guard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// BenchmarkHandler measures what the guard adds to a /virtual-like
// request: none (the bare handler), the default policy, and a bearer
// token.
func BenchmarkHandler(b *testing.B) {
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	const tok = "0123456789abcdef0123456789abcdef"
	def, _ := New(Policy{})
	withTok, _ := New(Policy{Tokens: []string{tok}})
	for _, c := range []struct {
		name string
		h    http.Handler
		auth bool
	}{{"bare", noop, false}, {"default", def.Handler(noop), false}, {"token", withTok.Handler(noop), true}} {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/virtual", strings.NewReader("{}"))
			r.Header.Set("Content-Type", "application/json")
			if c.auth {
				r.Header.Set("Authorization", "Bearer "+tok)
			}
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				c.h.ServeHTTP(w, r)
			}
		})
	}
}
