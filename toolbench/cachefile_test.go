package toolbench

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReadCacheNonFinite: Python's json.dump writes NaN, Infinity and
// -Infinity for such floats, and json.load reads them back; one of them in
// one answer dropped the whole file. Every entry is read (the non-finite
// values become null, and the record says so); only an entry that cannot
// be read is skipped, and reported with its key.
func TestReadCacheNonFinite(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "Finance", "stocks_for_Finance", "quote.json")
	writeFile(t, file, `{
    "{'symbol': 'AAPL'}": {
        "error": "",
        "response": {"price": NaN, "change": Infinity, "low": -Infinity, "name": "Apple NaN Infinity"}
    },
    "{'symbol': 'MSFT'}": {"error": "", "response": [1.5, NaN]},
    "{'symbol': 'IBM'}": {"error": "", "response": "plain"},
    "{'symbol': 'BAD'}": {"error": "", "response": [1, 2,]},
    "{'symbol': 'NONE'}": {"error": "", "response": nan},
    "{'symbol': 'ORCL'}": {"error": "", "response": {"price": 3}}
}`)
	got := map[string]*CacheRecord{}
	files, problems, err := ReadCache(dir, func(r *CacheRecord) error { got[r.Key] = r; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if files != 1 {
		t.Fatalf("files = %d, want the file read", files)
	}
	want := map[string]string{
		"{'symbol': 'AAPL'}": `{"price": null, "change": null, "low": null, "name": "Apple NaN Infinity"}`,
		"{'symbol': 'MSFT'}": `[1.5, null]`,
		"{'symbol': 'IBM'}":  `"plain"`,
		"{'symbol': 'ORCL'}": `{"price": 3}`,
	}
	for key, body := range want {
		r := got[key]
		if r == nil {
			t.Errorf("entry %s was not read", key)
			continue
		}
		if string(r.Response) != body {
			t.Errorf("%s: response %s, want %s", key, r.Response, body)
		}
		if nonFinite := key == "{'symbol': 'AAPL'}" || key == "{'symbol': 'MSFT'}"; r.NonFinite != nonFinite {
			t.Errorf("%s: NonFinite = %v, want %v", key, r.NonFinite, nonFinite)
		}
	}
	if len(got) != len(want) {
		t.Errorf("read %d entries, want %d", len(got), len(want))
	}
	if len(problems) != 2 {
		t.Fatalf("problems = %+v, want the two unreadable entries", problems)
	}
	for _, p := range problems {
		if (p.Key != "{'symbol': 'BAD'}" && p.Key != "{'symbol': 'NONE'}") || p.File != file || p.Err == "" {
			t.Errorf("problem %+v, want one of the unreadable entries with its file and reason", p)
		}
	}
}

// TestReadCacheTruncated: a file cut short keeps the entries before the
// cut, and the problem says where it broke.
func TestReadCacheTruncated(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "Data", "x_for_Data", "a.json")
	writeFile(t, file, `{"{'q': 1}": {"error": "", "response": "one"}, "{'q': 2}": {"error": "", "response": {"cut": [1, 2`)
	var keys []string
	_, problems, err := ReadCache(dir, func(r *CacheRecord) error { keys = append(keys, r.Key); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0] != "{'q': 1}" {
		t.Errorf("read %v, want the entry before the cut", keys)
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Err, "ends") || problems[0].Key != "{'q': 2}" {
		t.Errorf("problems = %+v, want the cut entry reported", problems)
	}
}
