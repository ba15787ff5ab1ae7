package configfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

type urlConfig struct {
	Model string `json:"model" flag:"model" url:"http" help:"endpoint"`
	Mode  string `json:"mode" flag:"mode" enum:"fast,slow" help:"mode"`
	Name  string `json:"name" flag:"name" help:"any text"`
}

// TestCheckURL holds URLs to the http(s) rule: the scheme written, a
// host, and messages that say the URL meant without showing credentials.
func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		want string
	}{
		{"http://127.0.0.1:8000/v1", true, ""},
		{"https://api.openai.com/v1", true, ""},
		{"HTTP://h/v1", true, ""},
		{"http://h/v1?api-key=K", true, ""},
		{"http://[::1]:8000/v1", true, ""},
		{"localhost:8000", false, "write its scheme, e.g. http://localhost:8000"},
		{"127.0.0.1:8000/v1", false, "http://127.0.0.1:8000/v1"},
		{"//h:1/v1", false, "http://h:1/v1"},
		{"h/v1?api-key=SECRET", false, "http://h/v1?api-key=xxxxx"},
		{"ftp://h/v1", false, "its scheme is ftp"},
		{"ws://h/v1", false, "its scheme is ws"},
		{"http:///v1", false, "has no host"},
		{"http://user:SECRET@:80/v1", false, "has no host"},
		{"http://h:bad/v1", false, "is not a URL"},
		{"http://h/%zz", false, "is not a URL"},
		{"", false, "write its scheme"},
	} {
		err := CheckURL(tc.in)
		if tc.ok != (err == nil) {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if err != nil && (!strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "SECRET")) {
			t.Errorf("%q: %q, want %q and no credential", tc.in, err, tc.want)
		}
	}
}

// TestCheckedFlagsAndKeys checks that a url- or enum-tagged field refuses
// a bad value as a flag (when parsed) and as a key of a file (with its
// line), and takes a good one both ways; an untagged field takes any.
func TestCheckedFlagsAndKeys(t *testing.T) {
	for _, tc := range []struct {
		args []string
		yaml string
		want string // "" when accepted
	}{
		{[]string{"--model", "http://h/v1"}, "model: http://h/v1\n", ""},
		{[]string{"--model", "h:8000/v1"}, "model: h:8000/v1\n", "http://h:8000/v1"},
		{[]string{"--mode", "fast"}, "mode: fast\n", ""},
		{[]string{"--mode", "fsat"}, "mode: fsat\n", "did you mean fast?"},
		{[]string{"--name", "h:8000"}, "name: h:8000\n", ""},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var def urlConfig
		b := Bind(fs, &def, BindOptions{})
		err := fs.Parse(tc.args)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("flags %v: %v, want %q", tc.args, err, tc.want)
		}
		if err == nil {
			var got urlConfig
			b.Apply(&got, nil, nil)
			if got.Model+got.Mode+got.Name != tc.args[1] {
				t.Errorf("flags %v: applied %+v", tc.args, got)
			}
		}
		p := filepath.Join(t.TempDir(), "c.yaml")
		os.WriteFile(p, []byte(tc.yaml), 0o644)
		var c urlConfig
		_, err = Load(p, &c)
		if (err == nil) != (tc.want == "") || err != nil && (!strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "c.yaml:1:")) {
			t.Errorf("file %q: %v, want %q at its line", tc.yaml, err, tc.want)
		}
	}
}
