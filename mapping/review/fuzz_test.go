package review

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// FuzzAnnotationPost sends any body to POST /api/annotations (the page's
// only decoder of client input): the answer is 201 with the annotation,
// or a 4xx JSON error; never a panic or a 5xx. Every accepted annotation
// is in the journal and survives reopening it.
func FuzzAnnotationPost(f *testing.F) {
	for _, s := range []string{
		`{"query":"q1","proposal":"world/search_books→world/find_titles","verdict":"accept"}`,
		`{"query":"q1","verdict":"edit","mapping":{"from":"world/search_books","to":"world/find_titles","inputs":[{"from":"q","to":"searchTerm"}]},"note":"n"}`,
		`{"query":"q1","verdict":"reject","annotator":"\u0000"}`, `{"query":"nope"}`, `[]`, `null`, `{"query":1}`, ``, `{"mapping":{"from":"","to":""}}`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	r, _, err := New(Options{Probe: fixture(f), Journal: filepath.Join(dir, "j.jsonl"), Annotator: "fuzz"})
	if err != nil {
		f.Fatal(err)
	}
	defer r.Close()
	mux, _ := r.mux()
	f.Fuzz(func(t *testing.T, body []byte) {
		before := len(r.j.annotations())
		req := httptest.NewRequest(http.MethodPost, "/api/annotations", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%d: the answer is not JSON: %q", rec.Code, rec.Body.Bytes())
		}
		after := len(r.j.annotations())
		switch {
		case rec.Code == http.StatusCreated:
			if after != before+1 {
				t.Fatalf("201 but the journal went from %d to %d annotations", before, after)
			}
		case rec.Code >= 400 && rec.Code < 500:
			if after != before {
				t.Fatalf("%d but the journal went from %d to %d annotations", rec.Code, before, after)
			}
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
		}
	})
	n := len(r.j.annotations())
	r.Close()
	j, problems, err := openJournal(filepath.Join(dir, "j.jsonl"))
	if err != nil || len(problems) > 0 {
		f.Fatalf("reopening the journal: %v %v", err, problems)
	}
	defer j.close()
	if got := len(j.annotations()); got != n {
		f.Fatalf("the journal held %d annotations, %d after reopening", n, got)
	}
}

// FuzzJournal opens any file as a review journal: it never panics, every
// annotation it returns has a mapping, and an annotation appended after
// it (even after a torn last line) is read back on reopening, with every
// earlier one.
func FuzzJournal(f *testing.F) {
	good := `{"id":"a1","query":"q1","verdict":"accept","mapping":{"from":"a/x","to":"b/y","score":0.5}}`
	for _, s := range []string{good + "\n", good + "\n" + good[:40], "\n\n", "{}\n", "not json\n" + good, good + "\r\n" + good, `{"mapping":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "j.jsonl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		j, _, err := openJournal(path)
		if err != nil {
			return
		}
		all := j.annotations()
		for _, a := range all {
			if a.Mapping == nil {
				t.Fatal("an annotation without a mapping was read")
			}
		}
		var a Annotation
		if err := json.Unmarshal([]byte(good), &a); err != nil {
			t.Fatal(err)
		}
		a.ID = "appended"
		if err := j.append(&a); err != nil {
			t.Fatal(err)
		}
		j.close()
		j2, _, err := openJournal(path)
		if err != nil {
			t.Fatalf("reopening after an append: %v", err)
		}
		defer j2.close()
		again := j2.annotations()
		if len(again) != len(all)+1 || again[len(again)-1].ID != "appended" {
			t.Fatalf("%d annotations, then %d after appending one (last %q)", len(all), len(again), again[len(again)-1].ID)
		}
	})
}
