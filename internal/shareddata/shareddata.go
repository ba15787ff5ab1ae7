package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the shared data folder: $TOOLENV_SHARED_DATA if set, else
// the first "shared/data" found beside the current directory or one of its
// parents. ok is false when there is none.
func Dir() (dir string, ok bool) {
	if d := os.Getenv("TOOLENV_SHARED_DATA"); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d, true
		}
		return "", false
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "shared", "data")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// Require returns the shared data folder joined with elem, or skips the
// test, saying why, when the folder is absent (CI always has it).
func Require(tb testing.TB, elem ...string) string {
	tb.Helper()
	d, ok := Dir()
	if !ok {
		tb.Skip("skipped: ../shared/data is not present beside the repository (set TOOLENV_SHARED_DATA to point at it)")
	}
	p := filepath.Join(append([]string{d}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("skipped: %s is not present in the shared data folder", p)
	}
	return p
}

// RequireFixture returns the shared fixtures folder (../shared/fixtures,
// beside the data folder Dir finds) joined with elem, or skips the test,
// saying why, when it is absent.
func RequireFixture(tb testing.TB, elem ...string) string {
	tb.Helper()
	d, ok := Dir()
	if !ok {
		tb.Skip("skipped: ../shared is not present beside the repository (set TOOLENV_SHARED_DATA to point at its data folder)")
	}
	p := filepath.Join(append([]string{filepath.Dir(d), "fixtures"}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("skipped: %s is not present in the shared folder", p)
	}
	return p
}
