package cli_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/cli"
)

// sample is a library's options struct, as the commands bind them.
type sample struct {
	Out   string `json:"out" flag:"out" default:"out" help:"folder for the report"`
	Seeds int    `json:"seeds" flag:"seeds" default:"3" help:"how many seeds"`
	Fast  bool   `json:"fast" flag:"fast" help:"skip the slow part"`
}

func ExampleBind() {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	o := cli.Bind(fs, cli.Defaults[sample], false)
	_ = fs.Parse([]string{"--seeds", "5"})
	fmt.Printf("%+v\n", *o.Value())
	// Output: {Out:out Seeds:5 Fast:false}
}

func ExampleReportCmd() {
	var out bytes.Buffer
	cmd := cli.ReportCmd(&out, &cobra.Command{Use: "seeds", Short: "count seeds"}, cli.Defaults[sample], "count",
		func(ctx context.Context, cfg *sample) (int, error) { return cfg.Seeds * 2, nil },
		func(n int, w io.Writer) { fmt.Fprintf(w, "%d seeds doubled\n", n) })
	for _, args := range [][]string{{"--seeds", "4"}, {"--seeds", "3", "--json"}} {
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			fmt.Println(err)
		}
	}
	fmt.Print(out.String())
	// Output:
	// 8 seeds doubled
	// 6
}

func ExampleWriteJSON() {
	_ = cli.WriteJSON(os.Stdout, map[string]string{"query": "a < b"})
	// Output:
	// {
	//   "query": "a < b"
	// }
}

// TestOptionsResolve: defaults < --config file < flags given, and a
// missing or wrong file is an error of the right status that names it.
func TestOptionsResolve(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("out: from-file\nseeds: 9\n"), 0o644)
	os.WriteFile(bad, []byte("seeds: many\n"), 0o644)
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name   string
		args   []string
		want   sample
		status toolenv.Status
	}{
		{"defaults", nil, sample{Out: "out", Seeds: 3}, ""},
		{"file", []string{"--config", good}, sample{Out: "from-file", Seeds: 9}, ""},
		{"flags over file", []string{"--config", good, "--seeds", "1", "--fast"}, sample{Out: "from-file", Seeds: 1, Fast: true}, ""},
		{"missing file", []string{"--config", filepath.Join(dir, "none.yaml")}, sample{}, toolenv.StatusNotFound},
		{"wrong value", []string{"--config", bad}, sample{}, toolenv.StatusInvalidArguments},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			o := cli.Bind(fs, cli.Defaults[sample], true)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			got, err := o.Resolve(log)
			if tc.status != "" {
				var te *toolenv.Error
				if !errors.As(err, &te) || te.Status != tc.status || !strings.Contains(err.Error(), ".yaml") {
					t.Fatalf("Resolve = %v, want a %s error naming the file", err, tc.status)
				}
				return
			}
			if err != nil || *got != tc.want {
				t.Fatalf("Resolve = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestReportCmdInterrupted: a run cut by an interrupt prints the part
// done and returns the interrupt; one that fails without a result prints
// nothing.
func TestReportCmdInterrupted(t *testing.T) {
	for _, tc := range []struct {
		name    string
		result  []string
		err     error
		cancel  bool
		printed string
		wantErr error
	}{
		{"done", []string{"a", "b"}, nil, false, "a,b\n", nil},
		{"interrupted with a part", []string{"a"}, context.Canceled, true, "a\n", context.Canceled},
		{"interrupted quietly", []string{"a"}, nil, true, "a\n", context.Canceled},
		{"failed", nil, errors.New("broken"), false, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			cmd := cli.ReportCmd(&out, &cobra.Command{Use: "r", SilenceUsage: true, SilenceErrors: true}, cli.Defaults[sample], "",
				func(ctx context.Context, cfg *sample) ([]string, error) { return tc.result, tc.err },
				func(r []string, w io.Writer) { fmt.Fprintln(w, strings.Join(r, ",")) })
			ctx, cancel := context.WithCancel(context.Background())
			if tc.cancel {
				cancel()
			}
			defer cancel()
			cmd.SetArgs(nil)
			err := cmd.ExecuteContext(ctx)
			if out.String() != tc.printed {
				t.Errorf("printed %q, want %q", out.String(), tc.printed)
			}
			want := tc.wantErr
			if want == nil {
				want = tc.err
			}
			if !errors.Is(err, want) && !(want == nil && err == nil) {
				t.Errorf("err = %v, want %v", err, want)
			}
		})
	}
}
