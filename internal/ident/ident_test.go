package ident

import (
	"strings"
	"testing"
)

func TestASCII(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"größe", "groesse"},
		{"Bevölkerung", "Bevoelkerung"},
		{"Sänger_Name", "Saenger_Name"},
		{"jahr", "jahr"},
		{"naïve café", "naive_cafe"},
		{"Free Meal Count (K-12)", "Free_Meal_Count_K_12"},
		{"price (€)", "price_euro"},
		{"  leading", "leading"},
		{"Łódź", "Lodz"},
		{"ÄÖÜ", "AEOEUE"},
		{"GRÖSSE", "GROESSE"},
		{"Ärger", "Aerger"},
		{"e-mail", "e_mail"},
		{"__x__", "x"},
	} {
		if got := ASCII(c.in); got != c.want {
			t.Errorf("ASCII(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if a, b := ASCII("名前"), ASCII("住所"); a == b || len(a) != 9 {
		t.Errorf("names without Latin form: %q, %q", a, b)
	}
	if got := Column("_already_ok1"); got != "_already_ok1" {
		t.Errorf("Column keeps identifiers: %q", got)
	}
	if got := Column("größe"); got != "groesse" {
		t.Errorf("Column(größe) = %q", got)
	}
}

func FuzzASCII(f *testing.F) {
	for _, s := range []string{"größe", "a b", "", "名前", "\xff\xfe", "ǅ", "ﬁ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := ASCII(s)
		if s != "" && out == "" {
			t.Fatalf("ASCII(%q) is empty", s)
		}
		if out != "" && !Valid(out) && !(out[0] >= '0' && out[0] <= '9') {
			t.Fatalf("ASCII(%q) = %q is not an identifier", s, out)
		}
		if ASCII(s) != out {
			t.Fatal("not deterministic")
		}
	})
}

func TestLimit(t *testing.T) {
	long := strings.Repeat("abcdefgh_", 10)
	a, b := Limit(long+"x", 64), Limit(long+"y", 64)
	if len(a) > 64 || len(b) > 64 || a == b || a[:40] != long[:40] {
		t.Errorf("Limit: %q %q", a, b)
	}
	if Limit("short", 64) != "short" {
		t.Error("a short name changed")
	}
}
