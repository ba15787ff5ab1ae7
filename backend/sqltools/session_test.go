package sqltools_test

import (
	"sync"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
)

// clock is a settable clock for eviction tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestIdleEviction(t *testing.T) {
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	h := newHarness(t, "slot", sqltools.Options{SessionIdle: 10 * time.Minute, Now: clk.Now})
	h.ok("initialize_active_data", heroInit)
	a := h.session
	clk.advance(9 * time.Minute)
	h.ok("aggregate_data", `{"data_source": "$starting_table$", "aggregation_type": "count"}`) // touches a
	clk.advance(9 * time.Minute)
	h.newSession()
	h.ok("initialize_active_data", heroInit) // b, at 18 min
	clk.advance(2 * time.Minute)             // a idle 11 min, b 2 min
	h.session = a
	r := h.call("aggregate_data", `{"data_source": "$starting_table$", "aggregation_type": "count"}`)
	if r.Status != toolenv.StatusNotFound {
		t.Fatalf("idle session: %s %s, want not_found", r.Status, r.Error)
	}
	if st := h.b.Stats(); st.Sessions != 1 || st.Evictions != 1 {
		t.Fatalf("stats %+v, want 1 session, 1 eviction", st)
	}
}

func TestMemoryCapEviction(t *testing.T) {
	probe := newHarness(t, "slot", sqltools.Options{})
	probe.ok("initialize_active_data", heroInit)
	one := probe.b.Stats().Bytes
	if one <= 0 {
		t.Fatalf("a session holds %d bytes", one)
	}
	h := newHarness(t, "slot", sqltools.Options{SessionMaxBytes: one*2 + one/2})
	var ids []string
	for i := 0; i < 3; i++ {
		h.newSession()
		h.ok("initialize_active_data", heroInit)
		ids = append(ids, h.session)
		if i == 1 {
			// Touch the first: the second becomes least recently used.
			h.session = ids[0]
			h.ok("aggregate_data", `{"data_source": "$starting_table$", "aggregation_type": "count", "label": "N"}`)
			h.session = ids[1]
		}
	}
	st := h.b.Stats()
	if st.Bytes > one*2+one/2 || st.Evictions == 0 {
		t.Fatalf("stats %+v over the cap %d", st, one*2+one/2)
	}
	h.session = ids[1]
	if r := h.call("aggregate_data", `{"data_source": "$starting_table$", "aggregation_type": "count"}`); r.Status != toolenv.StatusNotFound {
		t.Fatalf("least recently used session: %s, want not_found (evicted)", r.Status)
	}
	h.session = ids[2]
	h.ok("aggregate_data", `{"data_source": "$starting_table$", "aggregation_type": "count"}`)
}

func TestSessionOverCapAlone(t *testing.T) {
	h := newHarness(t, "slot", sqltools.Options{SessionMaxBytes: 100})
	r := h.call("initialize_active_data", heroInit)
	if r.Status != toolenv.StatusTooLarge {
		t.Fatalf("%s %s, want too_large", r.Status, r.Error)
	}
	if st := h.b.Stats(); st.Sessions != 0 {
		t.Fatalf("%d sessions left", st.Sessions)
	}
}

func TestLabelsAndReferences(t *testing.T) {
	h := newHarness(t, "slot", sqltools.Options{MaxLabels: 4})
	body := h.ok("initialize_active_data", heroInit)
	if body["label"] != "starting_table" {
		t.Fatalf("init label %v", body["label"])
	}
	body = h.ok("filter_data", `{"data_source": "starting_table", "key_name": "superhero_id", "condition": "less_than", "value": 5}`)
	if body["label"] != "result_1" {
		t.Fatalf("automatic label %v", body["label"])
	}
	h.ok("filter_data", `{"data_source": "$result_1$", "key_name": "superhero_id", "condition": "less_than", "value": 3, "label": "$SMALL$"}`)
	h.ok("filter_data", `{"data_source": "$SMALL$", "key_name": "superhero_id", "condition": "less_than", "value": 2, "label": "SMALL"}`) // replaces
	if r := h.call("filter_data", `{"data_source": "$SMALL$", "key_name": "superhero_id", "condition": "less_than", "value": 2, "label": "FOUR"}`); !r.OK() {
		t.Fatal(r.Error)
	}
	if r := h.call("filter_data", `{"data_source": "$SMALL$", "key_name": "superhero_id", "condition": "less_than", "value": 2, "label": "FIVE"}`); r.Status != toolenv.StatusTooLarge {
		t.Fatalf("fifth label: %s, want too_large", r.Status)
	}
	if !h.b.DropSession(h.session) || h.b.DropSession(h.session) {
		t.Fatal("DropSession should report the session once")
	}
}
