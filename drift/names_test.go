package drift

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWords(t *testing.T) {
	tests := []struct {
		in, style string
		words     []string
	}{
		{"page_size", styleSnake, []string{"page", "size"}},
		{"pageSize", styleCamel, []string{"page", "size"}},
		{"HTTPStatus", stylePasc, []string{"http", "status"}},
		{"page-size", styleKebab, []string{"page", "size"}},
		{"PAGE_SIZE", styleUpper, []string{"page", "size"}},
		{"Get Weather", styleTitle, []string{"get", "weather"}},
		{"q", styleLower, []string{"q"}},
		{"", styleLower, nil},
	}
	for _, tt := range tests {
		ws, st := words(tt.in)
		if st != tt.style || strings.Join(ws, ",") != strings.Join(tt.words, ",") {
			t.Errorf("%q: %v %s, want %v %s", tt.in, ws, st, tt.words, tt.style)
		}
		if len(ws) > 0 && !strings.EqualFold(joinWords(ws, st), tt.in) && st != styleLower {
			t.Errorf("%q does not rejoin: %q", tt.in, joinWords(ws, st))
		}
	}
}

// FuzzRenameCandidates checks that any name gives candidates without
// panicking, and that every candidate differs from the name.
func FuzzRenameCandidates(f *testing.F) {
	rules, err := DefaultRules()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"city", "page_number", "sortBy", "Get Weather", "", " ", "_", "A", "x__y", "ÉtéCity", "is_from"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if !utf8.ValidString(name) {
			return
		}
		for rule, cs := range rules.renameCandidates(name) {
			for _, c := range cs {
				if c.name == "" {
					t.Fatalf("%q: empty %s candidate", name, rule)
				}
			}
		}
	})
}
