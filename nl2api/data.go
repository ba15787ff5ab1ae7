package nl2api

import (
	"os"
	"path/filepath"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/configfile"
	"github.com/toolenv/toolenv/nl2api/bird"
)

// birdLayout is what --data must hold, for the errors that say so.
const birdLayout = "a BIRD folder holds dev.json and dev_databases/<db>/<db>.sqlite"

// checkData checks that dir is a BIRD folder (it holds dev.json). When
// it is not, the error names the folder meant: the BIRD folder below it
// (given the folder above, ../shared/data for ../shared/data/bird), the
// ones to choose from when it holds several, the folder of a dev.json
// given itself, or the BIRD folder nearest the name of a path that does
// not exist (../shared/data/brid), or those beside it.
func checkData(dir string) error {
	notFound := func(hint, format string, args ...any) error {
		return toolenv.Errorw(toolenv.StatusNotFound, hint, format, args...)
	}
	meant := func(cands []string) string {
		switch len(cands) {
		case 0:
			return ""
		case 1:
			return "did you mean --data " + cands[0] + "?"
		}
		return "it holds several: pass one of " + strings.Join(withFlag(cands), ", ")
	}
	st, err := os.Stat(dir)
	switch {
	case os.IsNotExist(err):
		cands := bird.Candidates(filepath.Dir(dir), 1)
		names := make([]string, len(cands))
		for i, c := range cands {
			names[i] = filepath.Base(c)
		}
		hint := birdLayout
		if near := configfile.Nearest(filepath.Base(dir), names); near != "" {
			hint = "did you mean --data " + filepath.Join(filepath.Dir(dir), near) + "?"
		} else if len(cands) > 0 {
			hint = "the BIRD folders beside it: " + strings.Join(cands, ", ")
		}
		return notFound(hint, "--data %s: no such folder", dir)
	case err != nil:
		return notFound(birdLayout, "--data %s: %v", dir, err)
	case !st.IsDir():
		if filepath.Base(dir) == bird.QuestionsFile {
			return notFound("did you mean --data "+filepath.Dir(dir)+"?", "--data %s is the questions file: give the folder that holds it", dir)
		}
		return notFound(birdLayout, "--data %s is a file, not a BIRD folder", dir)
	}
	if st, err := os.Stat(filepath.Join(dir, bird.QuestionsFile)); err == nil && !st.IsDir() {
		return nil
	}
	hint := meant(bird.Candidates(dir, 2))
	if hint == "" {
		hint = birdLayout
	}
	return notFound(hint, "--data %s has no %s, so it is not a BIRD folder", dir, bird.QuestionsFile)
}

// withFlag writes each folder as the --data flag that names it.
func withFlag(dirs []string) []string {
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = "--data " + d
	}
	return out
}
