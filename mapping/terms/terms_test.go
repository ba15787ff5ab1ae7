package terms

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// splitRef is Split as it was written first, over a slice of runes: the
// reference FuzzSplit holds the byte-walking Split to.
func splitRef(s string) []string {
	var out []string
	rs := []rune(s)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, strings.ToLower(string(rs[start:end])))
		}
		start = -1
	}
	plural := func(i int) bool { return rs[i] == 's' && (i+1 == len(rs) || !unicode.IsLower(rs[i+1])) }
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		p := rs[i-1]
		switch {
		case unicode.IsLower(p) && unicode.IsUpper(r),
			unicode.IsLetter(p) != unicode.IsLetter(r):
			flush(i)
			start = i
		case unicode.IsUpper(p) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && !plural(i+1):
			flush(i)
			start = i
		}
	}
	flush(len(rs))
	return out
}

var splitCases = []string{"getUserByID", "HTTPServerURL", "page_size", "IDs", "URLsList", "HTTPs", "ABCdEF", "aBCs", "Ünïcode_Straße", "ǅemal", "ΣΑΣ_σας", "x\xffY\xc3", "İstanbul", "ﬁle", "a1b2C3d", "日本語のテキストABC", ""}

// textRef is Text as it was written first, over splitRef's list.
func textRef(s string) []string {
	var out []string
	for _, w := range splitRef(s) {
		if stopwords[w] || utf8.RuneCountInString(w) < 2 {
			continue
		}
		if e, ok := abbreviations[w]; ok && (len(w) >= 3 || w == "id") {
			w = e
		}
		out = append(out, Canonical(w))
	}
	return out
}

// FuzzSplit: Split, Words (stopped after its first word too), JoinWords,
// Text and JoinText read any text as the list-building references do.
func FuzzSplit(f *testing.F) {
	for _, c := range splitCases {
		f.Add(c)
	}
	f.Add("The getUserByID endpoint returns the user's IDs and URLs for a page")
	f.Fuzz(func(t *testing.T, s string) {
		want := splitRef(s)
		if got := Split(s); !slices.Equal(got, want) {
			t.Fatalf("Split(%q) = %q, want %q", s, got, want)
		}
		for w := range Words(s) {
			if w != want[0] {
				t.Fatalf("Words(%q) starts with %q, want %q", s, w, want[0])
			}
			break
		}
		if got := JoinWords(s); got != strings.Join(want, " ") {
			t.Fatalf("JoinWords(%q) = %q", s, got)
		}
		wantText := textRef(s)
		if got := Text(s); !slices.Equal(got, wantText) {
			t.Fatalf("Text(%q) = %q, want %q", s, got, wantText)
		}
		if got := JoinText(s); got != strings.Join(wantText, " ") {
			t.Fatalf("JoinText(%q) = %q", s, got)
		}
		// In parts: cut s anywhere (at a byte, maybe inside a character)
		// and the parts read as the text with a space between them.
		for _, cut := range []int{0, len(s) / 3, len(s) / 2, len(s)} {
			a, b := s[:cut], s[cut:]
			if got, want := JoinText(a, b), strings.Join(textRef(a+" "+b), " "); got != want {
				t.Fatalf("JoinText(%q, %q) = %q, want %q", a, b, got, want)
			}
		}
	})
}

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

func ExampleTrigramCodes_Dice() {
	city := NewTrigramCodes("city")
	fmt.Printf("%.3f %.3f\n", city.Dice(NewTrigramCodes("City")), city.Dice(NewTrigramCodes("cityName")))
	fmt.Println(NewTrigramCodes("city").Dice(NewTrigramCodes("city_name")) == Trigram("city", "city_name"))
	// Output:
	// 1.000 0.571
	// true
}

// TestTrigramsDiceIsTrigram: trigram sets made once (Trigrams, and packed:
// TrigramCodes) compare exactly as
// Trigram compares the strings, on generated names (cases, digits,
// separators, repeated letters, non-Latin letters, strings too short to
// have a trigram).
func TestTrigramsDiceIsTrigram(t *testing.T) {
	alphabet := []rune("aAbBcCzZ019_- .éÄßжЖ漢")
	rng := rand.New(rand.NewPCG(7, 11))
	gen := func() string {
		n := rng.IntN(12)
		rs := make([]rune, n)
		for i := range rs {
			rs[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(rs)
	}
	for i := 0; i < 20000; i++ {
		a, b := gen(), gen()
		want := dice(trigrams(a), trigrams(b))
		if got := NewTrigrams(a).Dice(NewTrigrams(b)); got != want {
			t.Fatalf("NewTrigrams(%q).Dice(NewTrigrams(%q)) = %v, want %v", a, b, got, want)
		}
		if got := Trigram(a, b); got != want {
			t.Fatalf("Trigram(%q, %q) = %v, want %v", a, b, got, want)
		}
		if got := NewTrigramCodes(a).Dice(NewTrigramCodes(b)); got != want {
			t.Fatalf("NewTrigramCodes(%q).Dice(NewTrigramCodes(%q)) = %v, want %v", a, b, got, want)
		}
	}
}
