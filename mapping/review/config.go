package review

import (
	"log/slog"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping/probe"
	"github.com/toolenv/toolenv/server/guard"
)

// Config is a review as "toolenv map review" takes it. Its tags are the
// command's flags (internal/configfile binds them).
type Config struct {
	// Probe is the probe file to review (probe.RunFile writes it).
	Probe string `json:"probe" flag:"probe" path:"file" help:"the probe file to review (toolenv map probe --out)"`
	// Journal keeps the annotations; "" means Probe + ".review.jsonl".
	Journal   string `json:"journal" flag:"journal" path:"file" help:"annotations file, appended to (default: PROBE.review.jsonl)"`
	Addr      string `json:"addr" flag:"addr" default:"127.0.0.1:8088" help:"address to serve the page on"`
	Annotator string `json:"annotator" flag:"annotator" help:"default annotator name shown in the page"`
	// Export and ExportSet, when set, are where the reviewed ground truth
	// and the agreed mappings are written (Export.Write) instead of
	// serving the page.
	Export    string `json:"export" flag:"export" path:"file" help:"write the reviewed ground truth (JSON) here and exit"`
	ExportSet string `json:"export_set" flag:"export-set" path:"file" help:"write the agreed mappings as a mappings file here and exit"`
	// TokenEnv names the variable holding bearer tokens for programs.
	TokenEnv     string   `json:"auth_token_env" flag:"auth-token-env" help:"environment variable holding a bearer token programs may use instead of the login link (required when --addr is not a loopback address)"`
	AllowedHosts []string `json:"allowed_hosts" flag:"allowed-host" help:"a Host name the page may be reached by besides loopback names and the server's address (repeatable)"`
}

// Open reads the probe file cfg names, opens its journal (lines that do
// not parse are logged and skipped) and makes the page's guard: a login
// link, and the bearer tokens of the variable TokenEnv names (read with
// getenv). tokens says whether there are any: a page on an address other
// machines reach needs them. Mistakes in cfg are invalid_arguments
// errors.
func Open(cfg *Config, getenv func(string) string, log *slog.Logger) (r *Reviewer, tokens bool, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	invalid := func(err error) (*Reviewer, bool, error) {
		return nil, false, &toolenv.Error{Status: toolenv.StatusInvalidArguments, Err: err}
	}
	if cfg.Probe == "" {
		return nil, false, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--probe is required (a file written by toolenv map probe --out)")
	}
	f, err := probe.ReadFile(cfg.Probe)
	if err != nil {
		return invalid(err)
	}
	if cfg.Journal == "" {
		cfg.Journal = cfg.Probe + ".review.jsonl"
	}
	toks, err := guard.TokensFromEnv(getenv, cfg.TokenEnv)
	if err != nil {
		return invalid(err)
	}
	g, err := guard.New(guard.Policy{Login: true, Tokens: toks, AllowedHosts: cfg.AllowedHosts, Logger: log})
	if err != nil {
		return invalid(err)
	}
	r, problems, err := New(Options{Probe: f, Journal: cfg.Journal, Annotator: cfg.Annotator, Logger: log, Guard: g})
	if err != nil {
		return nil, false, err
	}
	for _, p := range problems {
		log.Warn("journal line skipped", "err", p)
	}
	return r, len(toks) > 0, nil
}
