package redact

import (
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:PW@host/rapidapi?key=SECRET": "http://user:xxxxx@host/rapidapi?key=xxxxx",
		"https://TOKEN@api.example/v1":            "https://xxxxx@api.example/v1",
		"http://h/v1?api-key=X&b=2#frag":          "http://h/v1?api-key=xxxxx&b=xxxxx",
		"http://127.0.0.1:8000/v1":                "http://127.0.0.1:8000/v1",
		"http://h/p?%zz":                          "http://h/p?xxxxx",
		"not a url?secret=1":                      "not a url?xxxxx",
		"":                                        "",
		"http://h/chat/completions?api-key=S&api-key=T": "http://h/chat/completions?api-key=xxxxx",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestText(t *testing.T) {
	msg := `upstream not connected for x: Post "http://user:PW@h:8080/rapidapi?key=SECRET": dial tcp 10.0.0.1:8080: connect: connection refused; see https://docs.example/a?token=T2.`
	got := Text(msg)
	for _, leak := range []string{"PW", "SECRET", "T2"} {
		if strings.Contains(got, leak) {
			t.Errorf("%q leaks %q", got, leak)
		}
	}
	for _, keep := range []string{"dial tcp 10.0.0.1:8080", "http://user:xxxxx@h:8080/rapidapi?key=xxxxx", "https://docs.example/a?token=xxxxx."} {
		if !strings.Contains(got, keep) {
			t.Errorf("%q lost %q", got, keep)
		}
	}
	if s := "no url here"; Text(s) != s {
		t.Error("changed text without a URL")
	}
}

func FuzzText(f *testing.F) {
	f.Add(`Post "http://u:p@h/x?k=v": EOF`)
	f.Add("https://a?b=c http://d")
	f.Fuzz(func(t *testing.T, s string) {
		out := Text(s)
		if strings.Contains(s, "://") {
			return
		}
		if out != s {
			t.Fatalf("Text changed %q without a URL into %q", s, out)
		}
	})
}
