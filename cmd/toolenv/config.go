package main

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/internal/cli"
	"github.com/toolenv/toolenv/internal/configfile"
)

// configFlags are a command's configuration flags (fields of
// environment.Config and harness.Config, by their tags) and --config,
// whose file (harness.File) holds them all.
type configFlags struct {
	path  string
	flags *configfile.Flags
}

// Which configuration flags a command has: every command that opens an
// environment has the sources and backends; serve also the HTTP server's
// and the MCP server's (mcp calls its naming flag --names); eval also its
// own.
var (
	bindServe = configfile.BindOptions{Skip: []string{"eval."}}
	bindMCP   = configfile.BindOptions{Skip: []string{"server.", "eval."}, Rename: map[string]string{
		"mcp.names": "names", "mcp.page_size": "page-size", "mcp.search_above": "search-above"}}
	bindEval = configfile.BindOptions{Skip: []string{"server.", "mcp.", "watch"}}
	bindEnv  = configfile.BindOptions{Skip: []string{"server.", "mcp.", "eval.", "watch"}}
	bindAll  = configfile.BindOptions{}
)

// bindConfig registers the configuration flags and --config on fs.
func bindConfig(fs *pflag.FlagSet, opts configfile.BindOptions) *configFlags {
	def := harness.DefaultFile()
	c := &configFlags{flags: configfile.Bind(fs, &def, opts)}
	fs.StringVar(&c.path, "config", "", "configuration file, YAML or JSON (docs/config.md); flags given override it")
	return c
}

// resolve returns the effective configuration: the defaults, then the
// configuration file, then the flags given. It logs the file's warnings.
func (c *configFlags) resolve(e *env) (*harness.File, error) {
	return harness.Resolve(c.path, c.flags, e.getenv, e.logger())
}

// open resolves the configuration and opens its environment.
func (c *configFlags) open(ctx context.Context, e *env) (*environment.Environment, error) {
	cfg, err := c.resolve(e)
	if err != nil {
		return nil, err
	}
	return environment.Open(ctx, &cfg.Config)
}

func newConfigCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the effective configuration, or the configuration file's JSON Schema",
	}
	var format string
	print := &cobra.Command{
		Use:   "print",
		Short: "Print the effective configuration: defaults, then --config, then the flags given",
		Args:  cobra.NoArgs,
	}
	cf := bindConfig(print.Flags(), bindAll)
	print.Flags().StringVar(&format, "format", "yaml", "yaml or json")
	print.RunE = func(cmd *cobra.Command, args []string) error {
		if err := cli.OneOf("format", format, "yaml", "json"); err != nil {
			return err
		}
		cfg, err := cf.resolve(e)
		if err != nil {
			return err
		}
		out, err := configfile.Marshal(cfg, format)
		if err != nil {
			return err
		}
		_, err = e.stdout.Write(out)
		return err
	}
	schema := &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of configuration files (also docs/toolenv.schema.json)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := harness.Schema()
			if err != nil {
				return err
			}
			_, err = e.stdout.Write(s)
			return err
		},
	}
	cmd.AddCommand(print, schema)
	return cmd
}
