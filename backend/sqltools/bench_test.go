package sqltools_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
)

const zipInit = `{"database": "student_club", "tables": [{"name": "zip_code"}]}`

// BenchmarkFilterZipCode measures one filter_data call on the 41,877-row
// zip_code table (the call counts the matching rows and reads a preview),
// reporting the median as well as the mean. Sub-benchmarks compare the
// indexed in-memory copy with querying the file, and an equality with a
// LIKE (which no index helps).
func BenchmarkFilterZipCode(b *testing.B) {
	states := []string{"New Jersey", "Texas", "Puerto Rico", "Vermont", "California", "Ohio"}
	for _, bc := range []struct {
		name string
		db   rodb.Options
		cond string
		val  func(i int) string
	}{
		{"equal_to/memory", rodb.Options{}, "equal_to", func(i int) string { return states[i%len(states)] }},
		{"equal_to/file", rodb.Options{InMemoryMaxBytes: -1}, "equal_to", func(i int) string { return states[i%len(states)] }},
		{"like/memory", rodb.Options{}, "like", func(i int) string { return fmt.Sprintf("%%%c%%ton", 'a'+i%26) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := newHarness(b, "slot", sqltools.Options{DB: bc.db})
			h.ok("initialize_active_data", zipInit)
			tool := h.c.Tool("filter_data")
			ctx := context.Background()
			times := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				args := map[string]any{"data_source": "$starting_table$", "key_name": "zip_code_state", "condition": bc.cond, "value": bc.val(i), "label": "F"}
				if bc.cond == "like" {
					args["key_name"] = "zip_code_city"
				}
				start := time.Now()
				r := h.b.Invoke(ctx, &toolenv.Call{Tool: tool, Args: args, Session: h.session})
				times = append(times, time.Since(start))
				if !r.OK() {
					b.Fatal(r.Error)
				}
			}
			b.StopTimer()
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
		})
	}
}
