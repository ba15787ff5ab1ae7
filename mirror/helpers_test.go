package mirror_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/upstream"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/mirror/sqlstore"
	"github.com/toolenv/toolenv/store"
)

func newStore(t testing.TB) *sqlstore.Store {
	t.Helper()
	st, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "mirror.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// apiServer is a real HTTP API on loopback with one endpoint per
// behaviour a real API shows: it answers, validates its parameters, fails
// once then answers, is slow, rate limits, is not found, refuses the key,
// answers binary or huge bodies. It records the time of every call.
type apiServer struct {
	*httptest.Server
	mu    sync.Mutex
	calls map[string][]time.Time
	flaky map[string]int // calls seen per flaky request
	delay time.Duration  // of /slow
	// holdAfter, when > 0, holds every call of /slow after that many
	// until release is closed (or the caller goes away).
	holdAfter int
	release   chan struct{}
	// dead makes /dead drop the connection without an answer.
	dead bool
}

var cities = []string{"Paris", "Lyon", "Berlin", "Madrid", "Rome", "Vienna", "Oslo", "Lisbon", "Prague", "Dublin", "Warsaw", "Athens"}

func newAPIServer(t testing.TB) *apiServer {
	s := &apiServer{calls: map[string][]time.Time{}, flaky: map[string]int{}, delay: 2 * time.Second}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/")
	q := r.URL.Query()
	s.mu.Lock()
	s.calls[name] = append(s.calls[name], time.Now())
	n := s.flaky[r.URL.Path+"?"+r.URL.RawQuery] + 1
	s.flaky[r.URL.Path+"?"+r.URL.RawQuery] = n
	held := name == "slow" && s.holdAfter > 0 && len(s.calls[name]) > s.holdAfter
	dead := s.dead
	s.mu.Unlock()
	if held {
		select {
		case <-s.release:
		case <-r.Context().Done():
			return
		}
	}
	if name == "dead" && dead {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch name {
	case "forecast", "ratelimited":
		city := q.Get("city")
		if city == "" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"message":"missing required parameter: city"}`)
			return
		}
		if name == "ratelimited" && n == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"message":"Too many requests"}`)
			return
		}
		days, _ := strconv.Atoi(q.Get("days"))
		if days == 0 {
			days = 1
		}
		known := false
		for _, c := range cities {
			known = known || c == city
		}
		if !known {
			fmt.Fprintf(w, `{"city":%q,"days":[]}`, city)
			return
		}
		var ds []string
		for d := range days {
			ds = append(ds, fmt.Sprintf(`{"day":%d,"min":%d,"max":%d,"summary":"partly cloudy"}`, d+1, 5+len(city)+d, 15+len(city)+d))
		}
		fmt.Fprintf(w, `{"city":%q,"days":[%s]}`, city, strings.Join(ds, ","))
	case "cities":
		b, _ := json.Marshal(map[string]any{"cities": cities})
		w.Write(b)
	case "flaky":
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `<html><body>503 Service Unavailable</body></html>`)
			return
		}
		fmt.Fprint(w, `{"ok":true}`)
	case "slow":
		select {
		case <-time.After(s.delay):
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, `{"ok":true}`)
	case "missing":
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"API doesn't exists"}`)
	case "private":
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"message":"You are not subscribed to this API."}`)
	case "binary":
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00\xff\xfe"))
	case "huge":
		fmt.Fprintf(w, `{"data":"%s"}`, strings.Repeat("x", 70000))
	case "latin1":
		// Text in ISO-8859-1, mostly ASCII: one byte in 300 is not UTF-8.
		w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
		w.Write([]byte("Caf\xe9 " + strings.Repeat("forecast for the week ", 14)))
	case "latin1json":
		w.Write([]byte("{\"city\":\"Z\xfcrich\",\"summary\":\"" + strings.Repeat("sunny ", 50) + "\"}"))
	case "dead":
		fmt.Fprint(w, `{"alive":true}`)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (s *apiServer) callTimes(name string) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.calls[name]...)
}

// weatherTools documents the server's endpoints, each a tool reached at
// its own URL.
func weatherTools(base string, names ...string) *toolenv.Collection {
	var tools []*toolenv.Tool
	for _, name := range names {
		in := toolenv.ObjectSchema()
		switch name {
		case "forecast", "ratelimited":
			in.SetProp("city", &toolenv.Schema{Type: "string", Description: "The city, e.g. Paris.", Examples: []any{"Paris"}})
			in.SetProp("days", &toolenv.Schema{Type: "integer", Description: "Days ahead.", Minimum: mirror.Ptr(1.0), Maximum: mirror.Ptr(5.0)})
			in.Required = []string{"city"}
		case "flaky", "slow", "binary", "huge", "missing", "private", "latin1", "latin1json", "dead":
			in.SetProp("q", &toolenv.Schema{Type: "string", Description: "A query.", Examples: []any{"a", "b", "c"}})
		}
		tools = append(tools, &toolenv.Tool{ID: "weather/" + name, Collection: "weather", Name: name, Title: strings.ToUpper(name[:1]) + name[1:],
			Description: "The " + name + " endpoint of the weather service: forecasts for a city.", Category: "Weather", Group: "weather_service",
			GroupDescription: "Forecasts of the weather.", Input: in, Binding: &toolenv.Binding{Method: "GET", Path: "/" + name, BaseURL: base}})
	}
	c := toolenv.NewCollection("weather", "openapi", tools)
	c.Policy.Validation = toolenv.ValidationLenient
	return c
}

// engine returns an Engine mirroring c through the invoke pipeline and
// the upstream backend (direct calls, as "toolenv mirror --upstream-direct"
// builds it).
func engine(t testing.TB, st mirror.Store, c *toolenv.Collection, maxBody int) *mirror.Engine {
	t.Helper()
	reg := invoke.NewRegistry()
	b, err := upstream.New(upstream.Config{Direct: true, Timeout: 10 * time.Second, MaxBody: int64(maxBody)})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(c, b); err != nil {
		t.Fatal(err)
	}
	return &mirror.Engine{Store: st, Dataset: "test", Tools: c.Tools, Collections: []*toolenv.Collection{c}, Invoker: invoke.New(reg, invoke.Options{MaxResultBytes: maxBody})}
}

// pairsOf returns a tool's pairs.
func pairsOf(t testing.TB, e *mirror.Engine, tool string) []*mirror.Pair {
	t.Helper()
	var out []*mirror.Pair
	if err := e.Store.EachPair(context.Background(), e.Dataset, mirror.PairQuery{Tool: tool}, func(p *mirror.Pair) error {
		out = append(out, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// pending counts the requests without a pair.
func pending(t testing.TB, e *mirror.Engine) int {
	t.Helper()
	n := 0
	if err := e.Store.EachRequest(context.Background(), e.Dataset, mirror.RequestQuery{Pending: true}, func(*mirror.Request) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}
