package pyfmt

import (
	"errors"
	"testing"
)

func TestParseLoose(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		keep      bool
		want      string // Repr of the value
		rest      string // the text after it
		truncated bool
	}{
		{"json", `{"a": 1, "b": [true, null]} tail`, true, `{'a': 1, 'b': [True, None]}`, ` tail`, false},
		{"python", `{'a': (1,), 'b': None, 'c': 'it\'s'}`, true, `{'a': [1], 'b': None, 'c': "it's"}`, ``, false},
		{"bare keys and =", `{name: "x", id$x= 2, 3: 'n'}`, true, `{'name': 'x', 'id$x': 2, '3': 'n'}`, ``, false},
		{"commas", `[,1,,2,] `, true, `[1, 2]`, ` `, false},
		{"missing commas", `{"a": 1 "b": [1 2 "c"]}`, true, `{'a': 1, 'b': [1, 2, 'c']}`, ``, false},
		{"inner quotes", `{"s": "He said "hi" to me"}`, true, `{'s': 'He said "hi" to me'}`, ``, false},
		{"raw newline", "{\"s\": \"a\nb\"}", true, `{'s': 'a\nb'}`, ``, false},
		{"escapes", `"\u00e9\ud83d\ude00\/\q\x41"`, true, `'é😀/qA'`, ``, false},
		{"numbers", `[+3, -.5, 5., 1e5, 007]`, true, `[3, -0.5, 5.0, 100000.0, 7]`, ``, false},
		{"words", `[True, nan, undefined, Infinity]`, true, `[True, None, None, None]`, ``, false},
		{"cut object", `{"a": {"b": [1, 2`, true, `{'a': {'b': [1, 2]}}`, ``, true},
		{"cut string kept", `{"a": "NoneTy`, true, `{'a': 'NoneTy'}`, ``, true},
		{"cut string dropped", `{"a": "NoneTy`, false, `{}`, ``, true},
		{"cut number", `[1, 12.`, true, `[1, 12]`, ``, true},
		{"cut exponent", `[1e`, true, `[1]`, ``, true},
		{"cut word", `[1, tru`, true, `[1]`, ``, true},
		{"cut key", `{"a": 1, "b`, true, `{'a': 1}`, ``, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, end, truncated, err := ParseLoose(tt.in, LooseOptions{KeepPartial: tt.keep})
			if err != nil {
				t.Fatalf("ParseLoose(%q): %v", tt.in, err)
			}
			if got := Repr(v); got != tt.want {
				t.Errorf("ParseLoose(%q) = %s, want %s", tt.in, got, tt.want)
			}
			if tt.in[end:] != tt.rest || truncated != tt.truncated {
				t.Errorf("ParseLoose(%q): rest %q truncated %v, want %q %v", tt.in, tt.in[end:], truncated, tt.rest, tt.truncated)
			}
		})
	}
	for _, bad := range []string{``, `  `, `{a 1}`, `[1 x]`, `wat`, `{"a": 1.2.3}`, `{@: 1}`} {
		v, _, _, err := ParseLoose(bad, LooseOptions{KeepPartial: true})
		var se *SyntaxError
		if err == nil || !errors.As(err, &se) {
			t.Errorf("ParseLoose(%q) = %v, %v; want a *SyntaxError", bad, v, err)
		}
	}
}

func TestUnescapeLoose(t *testing.T) {
	tests := map[string]string{
		`plain`:            `plain`,
		`a\"b\'c\\d\/e`:    `a"b'c\d/e`,
		`\n\t\u00e9\x41\q`: "\n\té" + `Aq`,
		`\ud83d\ude00`:     "😀",
		`\u12`:             `\u12`,
		`end\`:             `end\`,
		`é\Ӏ`:              `éӀ`,
	}
	for in, want := range tests {
		if got := UnescapeLoose(in); got != want {
			t.Errorf("UnescapeLoose(%q) = %q, want %q", in, got, want)
		}
	}
}
