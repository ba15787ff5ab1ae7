package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval"
)

// Files are the report files Write produces in the output folder.
var Files = []string{"summary.json", "report.md", "report.html"}

// Write summarises eps and writes summary.json, report.md, report.html
// and the StableToolBench exports (stb/) into dir. problems are shown on
// the page (skipped task lines, unreadable journal lines).
func Write(dir string, info *eval.RunInfo, eps []*eval.Episode, problems []error) (*eval.Summary, error) {
	s := eval.Summarize(eps)
	if info != nil {
		s.Provenance = &toolenv.Provenance{Version: info.Version, Config: info.Config}
	}
	s.Status = eval.StatusOf(info, eps)
	if err := toolenv.WriteJSONFile(filepath.Join(dir, "summary.json"), s); err != nil {
		return nil, fmt.Errorf("write summary: %w", err)
	}
	if err := toolenv.WriteFileAtomic(filepath.Join(dir, "report.md"), []byte(Markdown(info, s))); err != nil {
		return nil, fmt.Errorf("write report.md: %w", err)
	}
	var msgs []string
	if info != nil {
		msgs = append(msgs, info.Skipped...)
	}
	for _, p := range problems {
		msgs = append(msgs, p.Error())
	}
	var b bytes.Buffer
	if err := HTML(&b, info, s, eps, msgs, HTMLOptions{}); err != nil {
		return nil, fmt.Errorf("render report.html: %w", err)
	}
	if err := toolenv.WriteFileAtomic(filepath.Join(dir, "report.html"), b.Bytes()); err != nil {
		return nil, fmt.Errorf("write report.html: %w", err)
	}
	if err := WriteStableToolBench(filepath.Join(dir, "stb"), eps); err != nil {
		return nil, fmt.Errorf("write StableToolBench exports: %w", err)
	}
	// Reports are for people to read and share: readable by all.
	for _, name := range Files {
		_ = os.Chmod(filepath.Join(dir, name), 0o644)
	}
	return s, nil
}
