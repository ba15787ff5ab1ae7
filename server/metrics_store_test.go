package server

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
)

// TestMetricsCountStoreErrors: results the store failed are counted by
// operation, so that an answer served but not kept is never only a log
// line.
func TestMetricsCountStoreErrors(t *testing.T) {
	m := NewMetrics()
	call := &toolenv.Call{Frontend: "virtual"}
	for _, op := range []string{"write", "write", "read"} {
		res := &toolenv.Result{Status: toolenv.StatusOK, Source: toolenv.SourceSimulator}
		res.SetMeta(invoke.MetaStoreError, op)
		m.Observe(call, res, 0)
	}
	m.Observe(call, &toolenv.Result{Status: toolenv.StatusOK, Source: toolenv.SourceCache}, 0)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{`toolenv_store_errors_total{op="write"} 2`, `toolenv_store_errors_total{op="read"} 1`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
