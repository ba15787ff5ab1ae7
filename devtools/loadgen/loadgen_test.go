package loadgen

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunCountsRequestsAndFailures(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if n.Add(1)%10 == 0 {
			w.WriteHeader(500)
		}
		w.Write(body)
	}))
	defer srv.Close()
	reqs := []Request{{Method: "POST", URL: srv.URL, Body: []byte(`{"a":1}`)}, {Method: "POST", URL: srv.URL, Body: []byte(`{"b":2}`)}}
	res, err := Run(context.Background(), reqs, Options{Connections: 4, Duration: 200 * time.Millisecond, Warmup: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.RPS <= 0 || res.P50 <= 0 || res.P99 < res.P50 || res.Max < res.P99 {
		t.Fatalf("res = %+v", res)
	}
	if res.Non2xx == 0 || res.Non2xx > res.Requests/5 {
		t.Fatalf("non-2xx = %d of %d, want about a tenth", res.Non2xx, res.Requests)
	}
	if res.BytesRead < int64(res.Requests)*7 {
		t.Fatalf("bytes read = %d for %d requests", res.BytesRead, res.Requests)
	}
}

func TestRunDeadServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := Run(context.Background(), []Request{{Method: "GET", URL: url}}, Options{Connections: 2, Duration: 100 * time.Millisecond})
	if err == nil {
		t.Fatal("want an error when nothing answers")
	}
}

// TestRunOutlastsASlowServer: a server (or a machine) too slow to answer
// within Duration still gives a measurement, of the requests that
// completed after it, instead of none; a dead server still ends the run
// at Duration (TestRunDeadServer).
func TestRunOutlastsASlowServer(t *testing.T) {
	const d = 50 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // each answer takes longer than the whole measured phase
		case <-time.After(3 * d):
		case <-r.Context().Done():
		}
		w.Write([]byte("late"))
	}))
	defer srv.Close()
	res, err := Run(context.Background(), []Request{{Method: "GET", URL: srv.URL}}, Options{Connections: 2, Duration: d})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Errors != 0 || res.BytesRead < 4 {
		t.Fatalf("res = %+v", res)
	}
}
