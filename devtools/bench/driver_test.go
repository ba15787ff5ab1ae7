package bench

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// TestParseWrk reads a report of Debian's wrk 4.1.0 (--latency) and
// cases it must refuse.
func TestParseWrk(t *testing.T) {
	out, err := os.ReadFile("testdata/wrk-4.1.0.txt")
	if err != nil {
		t.Fatal(err)
	}
	res, err := parseWrk(string(out))
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 3222 || res.Elapsed != 1020*time.Millisecond || res.P50 != 759*time.Microsecond || res.P90 != 9670*time.Microsecond ||
		res.P99 != 32040*time.Microsecond || res.Max != 47740*time.Microsecond || res.Errors != 7 || res.Non2xx != 7 || math.Abs(res.RPS-3222/1.02) > 1e-6 {
		t.Errorf("parsed %+v", res)
	}
	for _, bad := range []string{"", "unable to connect to 127.0.0.1:1 Connection refused", strings.Replace(string(out), "3222 requests in 1.02s", "3222 requests in 0.00s", 1),
		strings.Replace(string(out), "50%  759.00us", "50%  759.00", 1)} {
		if _, err := parseWrk(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	for in, want := range map[string]time.Duration{"812.00us": 812 * time.Microsecond, "1.23ms": 1230 * time.Microsecond, "2.01s": 2010 * time.Millisecond, "1.50m": 90 * time.Second} {
		if got, err := parseWrkDuration(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
}

// FuzzParseWrk: any text is refused or read into a result whose figures
// are consistent; nothing panics.
func FuzzParseWrk(f *testing.F) {
	out, _ := os.ReadFile("testdata/wrk-4.1.0.txt")
	f.Add(string(out))
	f.Add("  10 requests in 1.00s, 1KB read\n")
	f.Fuzz(func(t *testing.T, s string) {
		res, err := parseWrk(s)
		if err != nil {
			return
		}
		if res.Elapsed <= 0 || math.IsNaN(res.RPS) || res.RPS != float64(res.Requests)/res.Elapsed.Seconds() {
			t.Fatalf("inconsistent %+v", res)
		}
	})
}

// TestTrueMedian: the median of an odd count is its middle value, of an
// even count the mean of the middle two, whatever the order.
func TestTrueMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{0.9}, 0.9},
		{[]float64{1.2, 0.8}, 1.0},
		{[]float64{0.95, 0.7, 1.1}, 0.95},
		{[]float64{1, 0.5, 0.9, 0.7, 2, 0.8}, 0.85},
	} {
		if got := trueMedian(c.xs); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("trueMedian(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}
