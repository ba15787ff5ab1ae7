package breaker

import (
	"errors"
	"strings"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestBreaker(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	b := New(Options{Failures: 3, Cooldown: 10 * time.Second, MaxCooldown: 25 * time.Second, Now: clk.now})
	fail := func() {
		t.Helper()
		done, err := b.Allow()
		if err != nil {
			t.Fatalf("refused while %s: %v", b.State(), err)
		}
		done(false, "connection refused")
	}
	// Failures not in a row do not open it.
	fail()
	fail()
	done, _ := b.Allow()
	done(true, "")
	fail()
	fail()
	if b.State() != Closed {
		t.Fatalf("opened after 2 failures in a row: %s", b.State())
	}
	fail()
	if b.State() != Open {
		t.Fatalf("not open after 3 in a row: %s", b.State())
	}
	_, err := b.Allow()
	var open *ErrOpen
	if !errors.As(err, &open) || open.Failures != 3 || !strings.Contains(err.Error(), "next try in 10s") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("open breaker: %v", err)
	}
	// After the cooldown one probe goes through; others still skip.
	clk.t = clk.t.Add(10 * time.Second)
	probe, err := b.Allow()
	if err != nil {
		t.Fatalf("no probe after the cooldown: %v", err)
	}
	if _, err := b.Allow(); err == nil {
		t.Fatal("a second call went through while the probe is out")
	}
	probe(false, "timeout")
	// The failed probe doubles the cooldown.
	clk.t = clk.t.Add(19 * time.Second)
	if _, err := b.Allow(); err == nil {
		t.Fatal("the cooldown did not double")
	}
	clk.t = clk.t.Add(time.Second)
	probe, err = b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	probe(false, "timeout")
	// Doubling stops at MaxCooldown.
	clk.t = clk.t.Add(25 * time.Second)
	probe, err = b.Allow()
	if err != nil {
		t.Fatalf("cooldown over its maximum: %v", err)
	}
	probe(true, "")
	if b.State() != Closed {
		t.Fatalf("a good probe did not close it: %s", b.State())
	}
	// Closed again with the first cooldown.
	fail()
	fail()
	fail()
	clk.t = clk.t.Add(10 * time.Second)
	if _, err := b.Allow(); err != nil {
		t.Fatalf("cooldown not reset: %v", err)
	}
}

func TestNeverOpens(t *testing.T) {
	b := New(Options{Failures: -1})
	for range 100 {
		done, err := b.Allow()
		if err != nil {
			t.Fatal(err)
		}
		done(false, "x")
	}
}

func TestSet(t *testing.T) {
	s := NewSet(Options{Failures: 1})
	done, _ := s.Get("http://a").Allow()
	done(false, "x")
	if _, err := s.Get("http://a").Allow(); err == nil {
		t.Fatal("a is not open")
	}
	if _, err := s.Get("http://b").Allow(); err != nil {
		t.Fatalf("b shares a's breaker: %v", err)
	}
}
