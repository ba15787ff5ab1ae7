package terms

import (
	"fmt"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := map[string]string{
		"getUserByID":      "get user by id",
		"HTTPServerURL":    "http server url",
		"page_size":        "page size",
		"max-results":      "max results",
		"v2Items":          "v 2 items",
		"  ":               "",
		"is_id":            "is id",
		"Ünïcode_Straße":   "ünïcode straße",
		"searchTerm2024ab": "search term 2024 ab",
	}
	for in, want := range tests {
		if got := strings.Join(Split(in), " "); got != want {
			t.Errorf("Split(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNameNormalisation(t *testing.T) {
	// Pairs that must normalise to the same words.
	same := [][2]string{
		{"getUser", "fetch_user"},
		{"num_results", "numberOfResults"},
		{"lat", "latitude"},
		{"lng", "longitude"},
		{"categories", "category"},
		{"created", "creates"},
		{"zip", "postcode"},
		{"zip_code", "postalCode"},
		{"startdate", "start_date"},
		{"username", "user_name"},
		{"is_id", "id"},
		{"qty", "quantity"},
		{"search_term", "searchTerm"},
		{"cities", "city"},
		{"movies", "movie"},
		{"mapped", "map"},
	}
	for _, p := range same {
		a, b := strings.Join(Name(p[0]), " "), strings.Join(Name(p[1]), " ")
		if a != b {
			t.Errorf("Name(%q) = %q, Name(%q) = %q; want equal", p[0], a, p[1], b)
		}
	}
	// Pairs that must stay apart.
	apart := [][2]string{
		{"news", "new"},
		{"status", "stat"},
		{"string", "str_value"},
		{"speed", "spe"},
	}
	for _, p := range apart {
		if a, b := strings.Join(Name(p[0]), " "), strings.Join(Name(p[1]), " "); a == b {
			t.Errorf("Name(%q) and Name(%q) both = %q", p[0], p[1], a)
		}
	}
}

func TestVocabularyHasNoConflicts(t *testing.T) {
	seen := map[string]int{}
	for i, g := range synonyms {
		for _, w := range g {
			st := Stem(w)
			if j, ok := seen[st]; ok && j != i {
				t.Errorf("%q (stem %q) is in synonym groups %v and %v", w, st, synonyms[j], g)
			}
			seen[st] = i
		}
	}
	for a, e := range abbreviations {
		if strings.ContainsAny(a+e, " _-") {
			t.Errorf("abbreviation %q → %q must be single words", a, e)
		}
	}
}

func TestSimilarities(t *testing.T) {
	if j := Jaccard([]string{"a", "b"}, []string{"b", "c"}); fmt.Sprintf("%.3f", j) != "0.333" {
		t.Errorf("Jaccard = %v", j)
	}
	if d := Dice([]string{"a", "b"}, []string{"b", "c"}); d != 0.5 {
		t.Errorf("Dice = %v", d)
	}
	if Jaccard(nil, nil) != 0 || Dice(nil, nil) != 0 || Trigram("", "") != 0 {
		t.Error("empty inputs must score 0")
	}
	if s := Trigram("colour", "color"); s < 0.5 || s >= 1 {
		t.Errorf("Trigram(colour, color) = %v", s)
	}
	if Trigram("Color", "color") != 1 {
		t.Error("Trigram must ignore case")
	}
}

func ExampleName() {
	fmt.Println(Name("fetchUserIDs"))
	fmt.Println(Name("retrieve_user_identifier"))
	// Output:
	// [get user identifier]
	// [get user identifier]
}
