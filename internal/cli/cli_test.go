package cli_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/cli"
)

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, cli.ExitOK},
		{cli.Usagef("--out is required"), cli.ExitUsage},
		{fmt.Errorf("wrapped: %w", cli.Usagef("x")), cli.ExitUsage},
		{errors.New(`unknown command "x" for "toolenv"`), cli.ExitUsage},
		{errors.New("accepts 1 arg(s), received 2"), cli.ExitUsage},
		{toolenv.Errorw(toolenv.StatusInvalidArguments, "", "bad"), cli.ExitUsage},
		{toolenv.Errorw(toolenv.StatusTooLarge, "", "big"), cli.ExitUsage},
		{toolenv.Errorw(toolenv.StatusNotFound, "", "gone"), cli.ExitNotFound},
		{fmt.Errorf("x: %w", toolenv.Errorw(toolenv.StatusUnknownTool, "", "y")), cli.ExitNotFound},
		{toolenv.Errorw(toolenv.StatusUnavailable, "", "down"), cli.ExitUpstream},
		{context.DeadlineExceeded, cli.ExitUpstream},
		{context.Canceled, cli.ExitInterrupt},
		{errors.New("disk full"), cli.ExitFailure},
	} {
		if got := cli.ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
	if cli.Usage(nil) != nil {
		t.Error("Usage(nil) is not nil")
	}
}

// tree is a command with a group (map) of two commands, one with flags.
func tree() *cobra.Command {
	root := &cobra.Command{Use: "toolenv", SilenceErrors: true, SilenceUsage: true}
	root.SetFlagErrorFunc(cli.SuggestFlag)
	group := &cobra.Command{Use: "map"}
	search := &cobra.Command{Use: "search", RunE: func(*cobra.Command, []string) error { return nil }}
	search.Flags().String("collection", "", "")
	search.Flags().String("secret", "", "")
	search.Flags().Lookup("secret").Hidden = true
	group.AddCommand(search, &cobra.Command{Use: "match", RunE: func(*cobra.Command, []string) error { return nil }})
	root.AddCommand(group)
	cli.RefuseUnknownCommands(root)
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	return root
}

func TestSuggestions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" for success
	}{
		{[]string{"map", "search", "--colection", "x"}, "did you mean --collection?"},
		{[]string{"map", "search", "--zzzzzzzzzz"}, "toolenv map search --help lists its flags"},
		{[]string{"map", "search", "--secre"}, "lists its flags"}, // hidden flags are never suggested
		{[]string{"map", "serch"}, `unknown command "serch" for "toolenv map" (did you mean search?)`},
		{[]string{"map", "qqqqqq"}, "toolenv map --help lists its commands"},
		{[]string{"map", "serch", "--collection", "x"}, "did you mean search?"},
		{[]string{"map"}, ""}, // a group alone prints its help
		{[]string{"map", "match"}, ""},
	} {
		root := tree()
		root.SetArgs(tc.args)
		err := root.Execute()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		case tc.want != "" && cli.ExitCode(err) != cli.ExitUsage:
			t.Errorf("%v: exit code %d, want %d", tc.args, cli.ExitCode(err), cli.ExitUsage)
		}
	}
}

func ExampleOneOf() {
	fmt.Println(cli.OneOf("format", "jsno", "yaml", "json"))
	fmt.Println(cli.OneOf("format", "json", "yaml", "json"))
	// Output:
	// --format "jsno": want yaml, json (did you mean json?)
	// <nil>
}

func ExampleExitCode() {
	fmt.Println(cli.ExitCode(cli.Usagef("--out is required")))
	fmt.Println(cli.ExitCode(toolenv.Errorw(toolenv.StatusNotFound, "", "no such collection")))
	fmt.Println(cli.ExitCode(toolenv.Errorw(toolenv.StatusUnavailable, "", "the model is down")))
	// Output:
	// 2
	// 3
	// 4
}
