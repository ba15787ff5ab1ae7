package configfile

import (
	"bytes"
	"testing"
)

// FuzzDecode: no input makes Decode panic or hang, and whatever it
// accepts prints to a file that loads back to the same configuration.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"store: s.db\nsources: [a, b]\ntimeout: 90s\nllm:\n  url: http://m/v1\n  mode: fast\n",
		`{"demo": true, "llm": {"key_env": "K", "api_key": "sk"}, "big": 12}`,
		"named: &a [x=y]\nsources: *a\n",
		"store: null\ntimeout: 0\nscore: 1e3\nlimit: 0x1f\n",
		"llm: [a]\n", "- a\n", "store: [a\n", "a: &x [*x]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := defaults()
		if _, err := Decode(data, "f.yaml", "", &c); err != nil {
			return
		}
		out, err := Marshal(&c, "yaml")
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		back := defaults()
		if _, err := Decode(out, "printed.yaml", "", &back); err != nil {
			t.Fatalf("the printed configuration does not load: %v\n%s", err, out)
		}
		again, _ := Marshal(&back, "yaml")
		if !bytes.Equal(out, again) {
			t.Fatalf("round trip differs:\n%s\n%s", out, again)
		}
	})
}
