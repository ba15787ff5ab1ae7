package stb

import (
	"fmt"
	"log/slog"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/metrics"
)

// ConvertConfig is a conversion as "toolenv eval stb convert" takes it.
// Its tags are the command's flags (internal/configfile binds them).
type ConvertConfig struct {
	Method string `json:"method" flag:"method" help:"the method in the answer file names (CoT@1, DFS_woFilter_w2)"`
	Out    string `json:"out" flag:"out" path:"file" help:"converted answers file to write"`
}

// Convert converts the raw answers under dir (ConvertDir), logging the
// answers it skips, writes them to Out and returns how many it
// converted. Without Method or Out it is an invalid_arguments error.
func (c *ConvertConfig) Convert(dir string, log *slog.Logger) (int, error) {
	if c.Method == "" || c.Out == "" {
		return 0, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--method (e.g. CoT@1, DFS_woFilter_w2) and --out are required")
	}
	cf, problems, err := ConvertDir(dir, c.Method)
	if err != nil {
		return 0, err
	}
	for _, p := range problems {
		log.Warn("answer skipped", "err", p)
	}
	return len(cf.IDs), WriteConverted(c.Out, cf)
}

// PassRate reads a pass_rate_results file and scores it over rounds
// (SolvePassRate; 0: the rounds recorded), logging the labels it cannot
// read. A file with no label in any round is an error wrapping
// ErrNoLabels.
func PassRate(path string, rounds int, log *slog.Logger) (metrics.PassRateResult, error) {
	f, err := ReadPassRate(path)
	if err != nil {
		return metrics.PassRateResult{}, err
	}
	r, problems := SolvePassRate(f, rounds)
	for _, pr := range problems {
		log.Warn("label", "problem", pr)
	}
	if len(r.PerRound) == 0 {
		return r, fmt.Errorf("%s: %w: its %d queries have no label in any round (pass --evaluate-times N to score N rounds anyway)", path, ErrNoLabels, r.Tasks)
	}
	return r, nil
}
