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
	// Keys are written back exactly as recorded (StableToolBench finds an
	// entry only under the client's own key order).
	for _, key := range []string{"{'id_conc': 'x', 'is_id': 5.0, 'flag': True}", "{'id_conc': '40698227-lumineers'}"} {
		if _, ok := raw[key]; !ok || len(raw) != 2 {
			t.Fatalf("exported keys = %v, want %s among the 2 recorded", raw, key)
		}
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
		{"separator in a tool name kept as sent", CacheRecord{Category: "Data", Tool: "../x_for_Data", API: "y"}},
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

// TestWriteCacheWhereStableToolBenchLooks: a record is written to the file
// StableToolBench's server reads for a request with its names (names
// standardized, an API name cut at "_for_<tool>"), under its key exactly
// as recorded.
func TestWriteCacheWhereStableToolBenchLooks(t *testing.T) {
	out := t.TempDir()
	recs := []*CacheRecord{
		{Category: "News, Media", Tool: "Weather API", API: "a/../../b", Key: "{'b': 1, 'a': 2}", Response: json.RawMessage(`"x"`)},
		{Category: "Data", Tool: "weather_api", API: "list_for_weather_api", Args: map[string]any{"b": 1, "a": 2}, Response: json.RawMessage(`"y"`)},
	}
	if n, err := WriteCache(out, recs); n != 2 || err != nil {
		t.Fatal(n, err)
	}
	for file, key := range map[string]string{
		filepath.Join(out, "News_Media", "weather_api_for_News_Media", "a_b.json"): "{'b': 1, 'a': 2}",
		filepath.Join(out, "Data", "weather_api_for_Data", "list.json"):            "{'a': 2, 'b': 1}",
	} {
		var m map[string]json.RawMessage
		if err := readJSON(file, &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m[key]; !ok || len(m) != 1 {
			t.Errorf("%s holds %v, want the key %s", file, m, key)
		}
	}
}
