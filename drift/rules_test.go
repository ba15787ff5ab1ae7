package drift

import (
	"testing"
	"testing/fstest"
)

func TestDefaultRules(t *testing.T) {
	r, err := DefaultRules()
	if err != nil {
		t.Fatal(err)
	}
	if r.SynonymPairs < 150 {
		t.Errorf("%d synonym pairs, want at least 150", r.SynonymPairs)
	}
	for w, syns := range r.Synonyms {
		for _, s := range syns {
			if s == w || !validIdent(s) || !validIdent(w) {
				t.Errorf("synonym pair %q/%q", w, s)
			}
		}
	}
	if len(r.Abbreviations) == 0 || len(r.Actions["get"]) == 0 || len(r.NestGroups) < 4 || len(r.ErrorStyles) < 3 || len(r.Hosts) == 0 {
		t.Errorf("rules incomplete: %d abbreviations, %d nest groups, %d error styles", len(r.Abbreviations), len(r.NestGroups), len(r.ErrorStyles))
	}
	for from, to := range r.Flips {
		if from == string(to) {
			t.Errorf("flip %s onto itself", from)
		}
	}
}

func TestReadRulesErrors(t *testing.T) {
	base := fstest.MapFS{}
	for _, f := range []string{"synonyms.tsv", "abbreviations.tsv", "actions.tsv", "default_flips.tsv", "nest_groups.json", "error_styles.json", "paths.json"} {
		data, err := ruleFiles.ReadFile("rules/" + f)
		if err != nil {
			t.Fatal(err)
		}
		base[f] = &fstest.MapFile{Data: data}
	}
	if _, err := ReadRules(base); err != nil {
		t.Fatalf("the shipped rules read from a folder: %v", err)
	}
	tests := map[string]string{
		"synonyms.tsv":      "city\tcity\n",
		"default_flips.tsv": "asc\tdesc\n",
		"error_styles.json": `[{"code_style":"shout","template":"{code} {message}"}]`,
		"paths.json":        `{"hosts":[{"match":"(","replace":"x"}]}`,
		"actions.tsv":       "get fetch\n",
	}
	for file, data := range tests {
		fs := fstest.MapFS{}
		for k, v := range base {
			fs[k] = v
		}
		fs[file] = &fstest.MapFile{Data: []byte(data)}
		if _, err := ReadRules(fs); err == nil {
			t.Errorf("bad %s accepted", file)
		}
	}
}
