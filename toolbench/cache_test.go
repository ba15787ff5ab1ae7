package toolbench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

func TestReadWriteCacheRoundTrip(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "Data", "theclique_for_Data", "songkick_concert.json")
	os.MkdirAll(filepath.Dir(file), 0o755)
	content := `{
  "{'id_conc': '40698227-lumineers'}": {"error": "", "response": "{'name': 'The Lumineers'}"},
  "{'id_conc': 'x', 'is_id': 5.0, 'flag': True}": {"error": "", "response": {"name": "X"}},
  "{'broken': ": {"error": "", "response": ""},
  "{'id_conc': 'y'}": "not an answer"
}`
	writeFile(t, file, content)
	writeFile(t, filepath.Join(dir, "stray.json"), `{}`)
	var recs []*CacheRecord
	files, problems, err := ReadCache(dir, func(r *CacheRecord) error { recs = append(recs, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if files != 1 || len(recs) != 2 || len(problems) != 3 {
		t.Fatalf("files=%d recs=%d problems=%+v", files, len(recs), problems)
	}
	r := recs[0]
	if r.Category != "Data" || r.Tool != "theclique" || r.API != "songkick_concert" || r.FunctionName() != "songkick_concert_for_theclique" {
		t.Fatalf("rec = %+v", r)
	}
	args, _ := toolenv.Canonical(recs[1].Args)
	if string(args) != `{"flag":true,"id_conc":"x","is_id":5}` {
		t.Fatalf("args = %s", args)
	}
	out := t.TempDir()
	if n, err := WriteCache(out, recs); n != 1 || err != nil {
		t.Fatal(n, err)
	}
	var again []*CacheRecord
	if _, problems, err := ReadCache(out, func(r *CacheRecord) error { again = append(again, r); return nil }); err != nil || len(problems) != 0 {
		t.Fatal(problems, err)
	}
	if len(again) != 2 {
		t.Fatalf("again = %d records", len(again))
	}
	for _, a := range again {
		for _, r := range recs {
			ka, _ := toolenv.Canonical(a.Args)
			kr, _ := toolenv.Canonical(r.Args)
			if string(ka) == string(kr) {
				ca, _ := toolenv.CanonicalizeJSON(a.Response)
				cr, _ := toolenv.CanonicalizeJSON(r.Response)
				if string(ca) != string(cr) {
					t.Errorf("%s: response %s, want %s", a.Key, ca, cr)
				}
				r.File = "matched"
			}
		}
	}
	for _, r := range recs {
		if r.File != "matched" {
			t.Errorf("record %+v not written back under the same key", r)
		}
	}
	var raw map[string]json.RawMessage
	data, _ := os.ReadFile(filepath.Join(out, "Data", "theclique_for_Data", "songkick_concert.json"))
	json.Unmarshal(data, &raw)
	if _, ok := raw["{'flag': True, 'id_conc': 'x', 'is_id': 5.0}"]; !ok {
		t.Fatalf("exported keys = %v", raw)
	}
}

// TestWriteCacheStaysInItsFolder checks that names from the docs that are
// not one folder or file name (".." as a category, an empty tool) are
// refused rather than written outside the export folder or at the wrong
// depth.
func TestWriteCacheStaysInItsFolder(t *testing.T) {
	tests := []struct {
		name string
		rec  CacheRecord
	}{
		{"parent folder as category", CacheRecord{Category: "..", Tool: "x", API: "y"}},
		{"current folder as category", CacheRecord{Category: ".", Tool: "x", API: "y"}},
		{"empty category", CacheRecord{Category: "", Tool: "x", API: "y"}},
		{"empty API", CacheRecord{Category: "Data", Tool: "x", API: ""}},
		{"separator in the API", CacheRecord{Category: "Data", Tool: "x", API: "a/../../b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			out := filepath.Join(root, "out")
			rec := tt.rec
			rec.Args = map[string]any{}
			n, err := WriteCache(out, []*CacheRecord{&rec})
			if err == nil || n != 0 {
				t.Fatalf("WriteCache = %d, %v; want an error naming the record", n, err)
			}
			var written []string
			filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					written = append(written, p)
				}
				return nil
			})
			if len(written) > 0 {
				t.Fatalf("wrote %v", written)
			}
		})
	}
}
