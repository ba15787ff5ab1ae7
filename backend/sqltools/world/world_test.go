package world_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/world"
)

// club is a small schema with the shapes writes must handle: an INTEGER
// PRIMARY KEY, a TEXT primary key, a composite WITHOUT ROWID key, a
// table without a key, foreign keys with every action, a
// self-reference, a CHECK, a UNIQUE column, odd and Unicode names.
var club = []string{
	`CREATE TABLE major (major_id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, dept TEXT)`,
	`CREATE TABLE "mémber" (id INTEGER PRIMARY KEY, "first name" TEXT NOT NULL, major TEXT REFERENCES major(major_id), mentor INTEGER REFERENCES "mémber"(id) ON DELETE SET NULL, age INTEGER CHECK (age >= 0), score REAL, note)`,
	`CREATE TABLE event (event_id TEXT NOT NULL, day INTEGER NOT NULL, title TEXT, PRIMARY KEY (event_id, day)) WITHOUT ROWID`,
	`CREATE TABLE attendance (member INTEGER REFERENCES "mémber"(id) ON DELETE CASCADE, event_id TEXT, day INTEGER, FOREIGN KEY (event_id, day) REFERENCES event(event_id, day))`,
	`CREATE TABLE budget (id INTEGER PRIMARY KEY, event_id TEXT, day INTEGER, amount REAL NOT NULL DEFAULT 0, created TEXT DEFAULT CURRENT_TIMESTAMP, FOREIGN KEY (event_id, day) REFERENCES event ON DELETE RESTRICT)`,
	`INSERT INTO major VALUES ('m1', 'Physics', 'Science'), ('m2', 'Art', NULL), ('m3', 'Dance', 'Arts')`,
	`INSERT INTO "mémber" VALUES (1, 'Ada', 'm1', NULL, 36, 9.5, NULL), (2, 'Bob', 'm2', 1, 20, NULL, x'00ff'), (3, 'Cé', NULL, 1, NULL, 7.0, 'x')`,
	`INSERT INTO event VALUES ('e1', 1, 'Opening'), ('e1', 2, 'Day two'), ('e2', 1, NULL)`,
	`INSERT INTO attendance VALUES (1, 'e1', 1), (2, 'e1', 1), (2, 'e2', 1), (2, 'e2', 1)`,
	`INSERT INTO budget VALUES (1, 'e1', 1, 100.0, '2020-01-01')`,
}

func num(s string) json.Number { return json.Number(s) }

func problemCodes(err error) string {
	r := toolenv.ResultOf(err)
	var codes []string
	for _, p := range r.Problems {
		codes = append(codes, p.Param+":"+p.Code)
	}
	return string(r.Status) + " " + strings.Join(codes, ",")
}

func TestWritesAreTheWorldsOwn(t *testing.T) {
	for _, inMemory := range []bool{true, false} {
		t.Run(fmt.Sprintf("inMemory=%v", inMemory), func(t *testing.T) {
			ctx := context.Background()
			b := openBase(t, makeDB(t, club...), inMemory)
			w1, w2 := b.New(nil), b.New(nil)
			baseMembers := dump(t, w1, "mémber")
			out, err := w1.Insert(ctx, "MÉMBER", []map[string]any{{"first name": "Dan", "major": "m1", "age": num("30")}}, "rows")
			if err == nil {
				t.Fatal("a table name matched with the wrong case of a non-ASCII letter should not resolve (SQLite folds ASCII only)")
			}
			out, err = w1.Insert(ctx, "mémber", []map[string]any{{"First Name": "Dan", "major": "m1", "age": num("30")}}, "rows")
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Rows) != 1 || out.Rows[0][0] != int64(4) || out.Rows[0][1] != "Dan" {
				t.Fatalf("inserted %v", out.Rows)
			}
			if _, err := w1.Update(ctx, "mémber", world.Keys{Values: [][]any{{num("2")}}, Param: "keys"}, map[string]any{"score": num("1.5")}, "values"); err != nil {
				t.Fatal(err)
			}
			if _, err := w1.Delete(ctx, "event", world.Keys{Values: [][]any{{"e1", num("2")}}, Param: "keys"}); err != nil {
				t.Fatal(err)
			}
			got := dump(t, w1, "mémber")
			if !strings.Contains(got, "4|'Dan'|'m1'|NULL|30|NULL|NULL") || !strings.Contains(got, "2|'Bob'|'m2'|1|20|1.5|") {
				t.Fatalf("w1 does not see its writes:\n%s", got)
			}
			if dump(t, w2, "mémber") != baseMembers || b.New(nil).Changed() {
				t.Fatalf("another world sees w1's writes:\n%s", dump(t, w2, "mémber"))
			}
			if n, _ := b.DB.QueryValue(ctx, `SELECT COUNT(*) FROM "mémber"`, nil); n != int64(3) {
				t.Fatalf("the base changed: %v members", n)
			}
			if ev := dump(t, w1, "event"); strings.Contains(ev, "Day two") {
				t.Fatalf("deleted event still there:\n%s", ev)
			}
			// w2 writes the same row differently; each keeps its own.
			if _, err := w2.Update(ctx, "mémber", world.Keys{Values: [][]any{{num("2")}}}, map[string]any{"score": num("99")}, "values"); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ { // alternate, so that connections switch worlds
				if !strings.Contains(dump(t, w1, "mémber"), "|1.5|") || !strings.Contains(dump(t, w2, "mémber"), "|99|") {
					t.Fatal("a world sees another's write")
				}
			}
			ch := w1.Changes()
			if ch.Rows() != 3 || ch.Table("event") == nil || ch.Table("event").Rows[0].After != nil {
				raw, _ := json.Marshal(ch)
				t.Fatalf("changes %s", raw)
			}
		})
	}
}

func TestConstraintsNameTheColumnAndRule(t *testing.T) {
	ctx := context.Background()
	b := openBase(t, makeDB(t, club...), true)
	for _, tc := range []struct {
		name string
		do   func(w *world.World) error
		want string
	}{
		{"wrong type", func(w *world.World) error {
			_, err := w.Insert(ctx, "mémber", []map[string]any{{"first name": "X", "age": "old"}}, "rows")
			return err
		}, "invalid_arguments rows[0].age:wrong_type"},
		{"a fraction for an integer", func(w *world.World) error {
			_, err := w.Insert(ctx, "mémber", []map[string]any{{"first name": "X", "age": num("3.5")}}, "rows")
			return err
		}, "rows[0].age:wrong_type"},
		{"not null missing", func(w *world.World) error {
			_, err := w.Insert(ctx, "mémber", []map[string]any{{"age": num("3")}}, "rows")
			return err
		}, "rows[0].first name:not_null"},
		{"not null set to null", func(w *world.World) error {
			_, err := w.Update(ctx, "mémber", world.Keys{Values: [][]any{{num("1")}}}, map[string]any{"first name": nil}, "values")
			return err
		}, "values.first name:not_null"},
		{"duplicate primary key", func(w *world.World) error {
			_, err := w.Insert(ctx, "major", []map[string]any{{"major_id": "m1", "name": "Other"}}, "rows")
			return err
		}, "rows[0].major_id:primary_key"},
		{"duplicate unique", func(w *world.World) error {
			_, err := w.Insert(ctx, "major", []map[string]any{{"major_id": "m9", "name": "Art"}}, "rows")
			return err
		}, "rows[0].name:unique"},
		{"missing text primary key", func(w *world.World) error {
			_, err := w.Insert(ctx, "major", []map[string]any{{"name": "Music"}}, "rows")
			return err
		}, "rows[0].major_id:missing_required"},
		{"foreign key to nothing", func(w *world.World) error {
			_, err := w.Insert(ctx, "mémber", []map[string]any{{"first name": "X", "major": "nope"}}, "rows")
			return err
		}, "major:foreign_key"},
		{"composite foreign key to nothing", func(w *world.World) error {
			_, err := w.Insert(ctx, "attendance", []map[string]any{{"member": num("1"), "event_id": "e1", "day": num("9")}}, "rows")
			return err
		}, "event_id:foreign_key"},
		{"delete a referenced row (NO ACTION)", func(w *world.World) error {
			_, err := w.Delete(ctx, "major", world.Keys{Values: [][]any{{"m1"}}, Param: "keys"})
			return err
		}, "major_id:foreign_key"},
		{"delete a referenced row (RESTRICT)", func(w *world.World) error {
			_, err := w.Delete(ctx, "event", world.Keys{Values: [][]any{{"e1", num("1")}}, Param: "keys"})
			return err
		}, ":foreign_key"},
		{"check", func(w *world.World) error {
			_, err := w.Update(ctx, "mémber", world.Keys{Values: [][]any{{num("1")}}}, map[string]any{"age": num("-1")}, "values")
			return err
		}, "values:check"},
		{"primary key not updatable", func(w *world.World) error {
			_, err := w.Update(ctx, "major", world.Keys{Values: [][]any{{"m2"}}}, map[string]any{"major_id": "m3"}, "values")
			return err
		}, "values.major_id:primary_key"},
		{"unknown column", func(w *world.World) error {
			_, err := w.Update(ctx, "major", world.Keys{Values: [][]any{{"m2"}}}, map[string]any{"colour": "red"}, "values")
			return err
		}, "values.colour:unknown_param"},
		{"unknown key", func(w *world.World) error {
			_, err := w.Delete(ctx, "major", world.Keys{Values: [][]any{{"m7"}}, Param: "keys"})
			return err
		}, "not_found keys:not_found"},
		{"volatile default", func(w *world.World) error {
			_, err := w.Insert(ctx, "budget", []map[string]any{{"event_id": "e2", "day": num("1")}}, "rows")
			return err
		}, "rows[0].created:missing_required"},
		{"unknown table", func(w *world.World) error {
			_, err := w.Insert(ctx, "nope", []map[string]any{{"x": 1}}, "rows")
			return err
		}, "table:not_in_enum"},
		{"a key of the wrong width", func(w *world.World) error {
			_, err := w.Delete(ctx, "event", world.Keys{Values: [][]any{{"e1"}}, Param: "keys"})
			return err
		}, "keys[0]:wrong_shape"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := b.New(nil)
			// A first write, so that the failing one runs on a world with
			// changes, which it must keep.
			if _, err := w.Update(ctx, "major", world.Keys{Values: [][]any{{"m2"}}}, map[string]any{"dept": "Arts"}, "values"); err != nil {
				t.Fatal(err)
			}
			before := w.Hash()
			err := tc.do(w)
			if err == nil {
				t.Fatal("the write succeeded")
			}
			if got := problemCodes(err); !strings.Contains(got, tc.want) {
				t.Fatalf("error %v: %s, want %s", err, got, tc.want)
			}
			if w.Hash() != before || w.Rows() != 1 {
				t.Fatal("a refused write changed the world")
			}
			if !strings.Contains(dump(t, w, "major"), "'Arts'") {
				t.Fatal("the earlier write was lost")
			}
		})
	}
}

func TestForeignKeyActions(t *testing.T) {
	ctx := context.Background()
	b := openBase(t, makeDB(t, club...), true)
	w := b.New(nil)
	// Deleting member 2 cascades to its attendance (3 rows, two of them
	// identical: a keyless table) and sets no mentor (nobody has 2).
	// Deleting member 1 sets the mentor of members 2 and 3 to NULL.
	out, err := w.Delete(ctx, "mémber", world.Keys{Values: [][]any{{num("1")}}, Param: "keys"})
	if err != nil {
		t.Fatal(err)
	}
	byTable := map[string]int{}
	for _, ch := range out.Changes {
		byTable[ch.Table]++
	}
	if byTable["mémber"] != 3 || byTable["attendance"] != 1 {
		t.Fatalf("changes %v", byTable)
	}
	if m := dump(t, w, "mémber"); strings.Contains(m, "|1|") || strings.Count(m, "\n") != 2 {
		t.Fatalf("mentors not set to NULL:\n%s", m)
	}
	if _, err := w.Delete(ctx, "mémber", world.Keys{Values: [][]any{{num("2")}}, Param: "keys"}); err != nil {
		t.Fatal(err)
	}
	if a := dump(t, w, "attendance"); a != "" {
		t.Fatalf("attendance not cascaded:\n%s", a)
	}
	// The end state, rebuilt from the changes alone, is the same.
	var all []world.Change
	w2 := b.New(nil)
	for _, op := range []func(*world.World) (*world.Written, error){
		func(w *world.World) (*world.Written, error) {
			return w.Delete(ctx, "mémber", world.Keys{Values: [][]any{{num("1")}}})
		},
		func(w *world.World) (*world.Written, error) {
			return w.Delete(ctx, "mémber", world.Keys{Values: [][]any{{num("2")}}})
		},
	} {
		o, err := op(w2)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, o.Changes...)
	}
	raw, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	var back []world.Change
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	w3 := b.New(nil)
	if err := w3.Apply(back); err != nil {
		t.Fatal(err)
	}
	if w3.Hash() != w.Hash() || dump(t, w3, "mémber") != dump(t, w, "mémber") || dump(t, w3, "attendance") != "" {
		t.Fatalf("replayed world differs: %s vs %s", w3.Hash(), w.Hash())
	}
}

func TestCanonical(t *testing.T) {
	ctx := context.Background()
	b := openBase(t, makeDB(t, club...), true)
	w := b.New(nil)
	empty := w.Hash()
	for _, v := range []any{"Sciences", "Science"} {
		if _, err := w.Update(ctx, "major", world.Keys{Values: [][]any{{"m1"}}}, map[string]any{"dept": v}, "values"); err != nil {
			t.Fatal(err)
		}
	}
	if w.Changed() || w.Hash() != empty {
		t.Fatal("a row changed back to its base contents is still a change")
	}
	// Two paths to one state: one hash.
	a, c := b.New(nil), b.New(nil)
	if _, err := a.Insert(ctx, "major", []map[string]any{{"major_id": "m8", "name": "Music"}, {"major_id": "m4", "name": "Law"}}, "rows"); err != nil {
		t.Fatal(err)
	}
	for _, r := range []map[string]any{{"major_id": "m4", "name": "Law"}, {"major_id": "m8", "name": "Mus"}} {
		if _, err := c.Insert(ctx, "major", []map[string]any{r}, "rows"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Update(ctx, "major", world.Keys{Values: [][]any{{"m8"}}}, map[string]any{"name": "Music"}, "values"); err != nil {
		t.Fatal(err)
	}
	if a.Hash() != c.Hash() {
		ra, _ := json.Marshal(a.Changes())
		rc, _ := json.Marshal(c.Changes())
		t.Fatalf("same state, different hashes:\n%s\n%s", ra, rc)
	}
	// Deleting a row and inserting it again with its key is no change
	// (a new rowid, the same row).
	d := b.New(nil)
	if _, err := d.Delete(ctx, "major", world.Keys{Values: [][]any{{"m3"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Insert(ctx, "major", []map[string]any{{"major_id": "m3", "name": "Dance", "dept": "Arts"}}, "rows"); err != nil {
		t.Fatal(err)
	}
	if d.Hash() != empty {
		raw, _ := json.Marshal(d.Changes())
		t.Fatalf("a row deleted and inserted again counts as a change: %s", raw)
	}
}

func TestScriptInitialState(t *testing.T) {
	ctx := context.Background()
	b := openBase(t, makeDB(t, club...), true)
	init, err := b.Script(ctx, `UPDATE major SET dept = 'Humanities' WHERE major_id = 'm2'; INSERT INTO major VALUES ('m7', 'Music', NULL); DELETE FROM attendance WHERE member = 1`)
	if err != nil {
		t.Fatal(err)
	}
	w := b.New(init)
	if !w.Changed() || !w.Changes().Empty() {
		t.Fatalf("a fresh world from an initial state: changed %v, changes %v", w.Changed(), w.Changes())
	}
	if m := dump(t, w, "major"); !strings.Contains(m, "'Humanities'") || !strings.Contains(m, "'Music'") {
		t.Fatalf("initial state not applied:\n%s", m)
	}
	if _, err := w.Delete(ctx, "major", world.Keys{Values: [][]any{{"m7"}}}); err != nil {
		t.Fatal(err)
	}
	ch := w.Changes()
	if ch.Rows() != 1 || ch.Tables[0].Rows[0].After != nil {
		raw, _ := json.Marshal(ch)
		t.Fatalf("changes since the initial state: %s", raw)
	}
	again, err := b.Script(ctx, `UPDATE major SET dept = 'Humanities' WHERE major_id = 'm2'; INSERT INTO major VALUES ('m7', 'Music', NULL); DELETE FROM attendance WHERE member = 1`)
	if err != nil || again != init {
		t.Fatalf("the same script is not shared: %v", err)
	}
	for _, bad := range []struct{ sql, want string }{
		{`CREATE TABLE x (a)`, "only changes rows"},
		{`COMMIT`, "only changes rows"},
		{`SELECT 1; PRAGMA foreign_keys = OFF`, "only changes rows"},
		{`UPDATE nope SET a = 1`, "failed"},
		{`INSERT INTO "mémber" (id, "first name", major) VALUES (9, 'Z', 'none')`, "failed"},
	} {
		if _, err := b.Script(ctx, bad.sql); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("script %q: %v, want %q", bad.sql, err, bad.want)
		}
	}
}

func TestManyWorldsWriteTheSameRow(t *testing.T) {
	ctx := context.Background()
	b := openBase(t, makeDB(t, club...), true)
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			w := b.New(nil)
			for step := 0; step < 3; step++ {
				v := fmt.Sprintf("w%d-%d", i, step)
				if _, err := w.Update(ctx, "major", world.Keys{Values: [][]any{{"m1"}}}, map[string]any{"dept": v}, "values"); err != nil {
					errs <- err
					return
				}
				got, err := w.QueryValue(ctx, `SELECT dept FROM major WHERE major_id = 'm1'`, nil)
				if err != nil || got != v {
					errs <- fmt.Errorf("world %d step %d reads %v (%v), wrote %s", i, step, got, err, v)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
