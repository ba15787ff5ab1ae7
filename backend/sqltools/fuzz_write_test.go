package sqltools_test

import (
	"fmt"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/eval/endstate"
)

// FuzzWrite calls the SLOT and SEL write tools with arbitrary JSON
// arguments in a world over student_club: every call comes back with a
// Result (no panic, no hang, no internal error), a refusal carries an
// error and leaves the world's state exactly as it was (no half-applied
// write), and whatever the session did, a fresh world starts from the
// untouched base.
func FuzzWrite(f *testing.F) {
	seeds := []string{
		`{"table": "member", "rows": [{"member_id": "recNEW", "first_name": "Ada", "last_name": "L", "link_to_major": "rec06DF6vZ1CyPKpc"}]}`,
		`{"table": "member", "rows": [{"member_id": "recNEW", "first_name": 1, "zip": "not a number"}]}`,
		`{"table": "member", "keys": "$KEYS$", "values": {"position": "Treasurer"}, "label": "U"}`,
		`{"table": "member", "keys": [["rec1x5zWFCHKFJd7H"]], "values": {"link_to_major": "nowhere"}}`,
		`{"table": "attendance", "keys": [["rec2N69DMcrqN9PJC", "recD078PnS3x2doBe"]]}`,
		`{"table": "major", "keys": [["rec06DF6vZ1CyPKpc"]]}`,
		`{"table": "member", "keys": [[null]], "values": {"member_id": null}}`,
		`{"table": "no such table", "rows": []}`,
		`{"table": "event", "rows": [{"event_id": "e", "event_name": "x", "type": "y", "status": "z", "event_date": "2020", "location": "l", "notes": "", "unexpected": 3}]}`,
		`{"member_id": "recNEW", "first_name": "Ada", "last_name": "L", "position": "Member"}`,
		`{"keys": [["rec1x5zWFCHKFJd7H"]], "values": {"email": null}}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), s)
	}
	slot := newWritable(f, sqltools.FlavorSlot)
	sel := newWritable(f, sqltools.FlavorSel)
	var tools []struct {
		h    *harness
		name string
	}
	for _, h := range []*harness{slot, sel} {
		for _, tl := range h.c.Tools {
			if tl.State() == toolenv.StateWrite && tl.Name != endstate.InitTool {
				tools = append(tools, struct {
					h    *harness
					name string
				}{h, tl.Name})
			}
		}
	}
	if len(tools) < 6 {
		f.Fatalf("only %d write tools", len(tools))
	}
	slot.ok(endstate.InitTool, `{}`)
	fresh := slot.ok(endstate.InspectTool, `{}`)["hash"]
	n := 0
	f.Fuzz(func(t *testing.T, which uint8, raw string) {
		var args map[string]any
		if toolenv.DecodeJSON([]byte(raw), &args) != nil {
			return
		}
		n++
		tool := tools[int(which)%len(tools)]
		h := tool.h
		h.t = t
		h.session = fmt.Sprintf("fuzzw-%d", n)
		defer h.b.DropSession(h.session)
		h.ok(endstate.InitTool, `{}`)
		h.ok(sqltools.InitTool, memberInit)
		if h == slot {
			h.ok("filter_data", `{"data_source": "$starting_table$", "key_name": "member_last_name", "condition": "equal_to", "value": "Sanders", "label": "F"}`)
			h.ok("retrieve_data", `{"data_source": "$F$", "key_names": ["member_member_id"], "label": "KEYS"}`)
		}
		before := h.ok(endstate.InspectTool, `{}`)["hash"]
		r := h.call(tool.name, raw)
		if r == nil {
			t.Fatal("nil result")
		}
		if r.Status == toolenv.StatusInternal {
			t.Fatalf("%s %s: internal error %s", tool.name, raw, r.Error)
		}
		if !r.OK() {
			if r.Error == "" {
				t.Fatalf("%s %s: failure %s without an error message", tool.name, raw, r.Status)
			}
			if after := h.ok(endstate.InspectTool, `{}`)["hash"]; after != before {
				t.Fatalf("%s %s refused (%s) but the world changed: %v -> %v", tool.name, raw, r.Error, before, after)
			}
		}
		h.session = fmt.Sprintf("fuzzw-fresh-%d", n)
		h.ok(endstate.InitTool, `{}`)
		if got := h.ok(endstate.InspectTool, `{}`)["hash"]; got != fresh {
			t.Fatalf("after %s %s, a fresh world hashes %v, want %v: the base changed", tool.name, raw, got, fresh)
		}
		h.b.DropSession(h.session)
	})
}
