package harness

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/configfile"
)

// TestResolve: defaults < $TOOLENV_STORE < file < flags; bad files are
// errors with the status the CLI turns into its exit code.
func TestResolve(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	env := map[string]string{StoreEnv: "from-env.db", "K": "secret"}
	getenv := func(k string) string { return env[k] }
	bind := func(args ...string) *configfile.Flags {
		def := DefaultFile()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		f := configfile.Bind(fs, &def, configfile.BindOptions{})
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		name, path string
		args       []string
		store      string
		status     toolenv.Status
		err        string
	}{
		{"defaults and the environment", "", nil, "from-env.db", "", ""},
		{"the file over the environment", write("a.yaml", "store: file.db\n"), nil, filepath.Join(dir, "file.db"), "", ""},
		{"a flag over the file", write("b.yaml", "store: file.db\n"), []string{"--store", "flag.db"}, "flag.db", "", ""},
		{"no such file", filepath.Join(dir, "none.yaml"), nil, "", toolenv.StatusNotFound, "none.yaml does not exist"},
		{"unknown key", write("c.yaml", "stor: x\n"), nil, "", toolenv.StatusInvalidArguments, "did you mean store?"},
		{"zero page size", write("d.yaml", "mcp:\n  page_size: 0\n"), nil, "", toolenv.StatusInvalidArguments, "MCP page size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			cfg, err := Resolve(tc.path, bind(tc.args...), getenv, slog.New(slog.NewTextHandler(&logs, nil)))
			if tc.err != "" {
				if toolenv.StatusOf(err) != tc.status || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v (status %s), want %s with %q", err, toolenv.StatusOf(err), tc.status, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Store != tc.store || cfg.Logger == nil || cfg.Getenv("K") != "secret" {
				t.Errorf("store %q, want %q", cfg.Store, tc.store)
			}
		})
	}
}
