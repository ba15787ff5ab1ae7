package mirror

import (
	"testing"
	"time"
)

// TestBreaker walks one tool's circuit breaker through its states on a
// clock the test sets: closed while failures are fewer than `after` in a
// row (a success resets the count), open for `cool`, then half open with
// one probe at a time, which closes it on success and opens it again on
// failure.
func TestBreaker(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	b := &breaker{after: 3, cool: time.Minute}
	steps := []struct {
		name   string
		do     func() bool
		result bool
	}{
		{"closed", func() bool { return b.allow(at(0)) }, true},
		{"two failures", func() bool { b.record(at(1), true); b.record(at(2), true); return b.allow(at(2)) }, true},
		{"a success resets the count", func() bool {
			b.record(at(3), false)
			b.record(at(4), true)
			b.record(at(5), true)
			return b.allow(at(5))
		}, true},
		{"the third failure in a row opens it", func() bool { b.record(at(6), true); return b.allow(at(6)) }, false},
		{"still open before the cool-down ends", func() bool { return b.allow(at(65)) }, false},
		{"half open: one probe", func() bool { return b.allow(at(66)) }, true},
		{"half open: no second probe while the first runs", func() bool { return b.allow(at(67)) }, false},
		{"the probe fails: open again", func() bool { b.record(at(70), true); return b.allow(at(71)) }, false},
		{"open for a full cool-down from the failed probe", func() bool { return b.allow(at(129)) }, false},
		{"half open again", func() bool { return b.allow(at(130)) }, true},
		{"the probe succeeds: closed", func() bool { b.record(at(131), false); return b.allow(at(131)) && b.allow(at(131)) && b.allow(at(131)) }, true},
	}
	for _, s := range steps {
		if got := s.do(); got != s.result {
			t.Fatalf("%s: allow = %v, want %v", s.name, got, s.result)
		}
	}
}
