package bird

import (
	"os"
	"path/filepath"
	"sort"
)

// Candidates lists the BIRD folders (folders holding dev.json) found
// below dir, at most depth levels down, as dir joined with their relative
// paths, sorted; dir itself is not listed, nor what lies below a BIRD
// folder. It is how a tool says which folder was meant when it is given
// the folder above one ("../shared/data" for "../shared/data/bird").
// Folders that cannot be read are skipped.
func Candidates(dir string, depth int) []string {
	var out []string
	var walk func(d string, left int)
	walk = func(d string, left int) {
		if left == 0 {
			return
		}
		entries, err := os.ReadDir(d)
		if err != nil {
			return
		}
		for _, e := range entries {
			sub := filepath.Join(d, e.Name())
			if st, err := os.Stat(sub); err != nil || !st.IsDir() { // follows links, as a reader's path would
				continue
			}
			if st, err := os.Stat(filepath.Join(sub, QuestionsFile)); err == nil && !st.IsDir() {
				out = append(out, sub)
				continue
			}
			walk(sub, left-1)
		}
	}
	walk(dir, depth)
	sort.Strings(out)
	return out
}
