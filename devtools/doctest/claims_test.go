package doctest

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// docFiles returns README.md and docs/*.md of the checkout, relative.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(docs)
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

// TestREADMETestCommandIsCI holds the README's test command to the one
// .ci/run runs.
func TestREADMETestCommandIsCI(t *testing.T) {
	root := moduleRoot(t)
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, l := range strings.Split(string(ci), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "go test") {
			want = strings.TrimSpace(l)
		}
	}
	if want == "" {
		t.Fatal(".ci/run runs no `go test` command")
	}
	src, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := Parse("README.md", src)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if b.Lang != "sh" {
			continue
		}
		for _, c := range Commands(b.Lines) {
			if strings.Join(c.Words, " ") == want {
				return
			}
		}
	}
	t.Fatalf("no sh block of README.md shows %q, the test command .ci/run runs", want)
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks checks that every relative link of README.md and
// docs/*.md names a file or folder of the repository.
func TestDocLinks(t *testing.T) {
	root := moduleRoot(t)
	for _, name := range docFiles(t, root) {
		path := filepath.Join(root, filepath.FromSlash(name))
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		n := 0
		for sc.Scan() {
			n++
			for _, m := range mdLink.FindAllStringSubmatch(sc.Text(), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				if _, err := os.Stat(filepath.Join(filepath.Dir(path), filepath.FromSlash(target))); err != nil {
					t.Errorf("%s:%d: link to %s, which is not in the repository", name, n, m[1])
				}
			}
		}
		f.Close()
	}
}

var (
	goTestCmd = regexp.MustCompile(`go test (?:-[^ ]+ )*(\./[^\s` + "`" + `]*)([^` + "`" + `\n]*)`)
	runFlag   = regexp.MustCompile(`-run[ =]'?"?([^'"\s` + "`" + `]+)`)
	testFunc  = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz|Example)\w*)\(`)
)

// TestDocsNameRealTests checks that every `go test ./pkg -run X` the docs
// cite as proof names a test that exists in that package, so that a
// renamed test does not leave a claim pointing at nothing.
func TestDocsNameRealTests(t *testing.T) {
	root := moduleRoot(t)
	funcs := map[string][]string{} // package dir → its test functions
	checked := 0
	for _, name := range docFiles(t, root) {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			for _, m := range goTestCmd.FindAllStringSubmatch(line, -1) {
				pkg, rest := strings.TrimSuffix(m[1], "/..."), m[2]
				if strings.HasSuffix(m[1], "/...") || strings.Contains(rest, "-bench") || strings.Contains(rest, "-fuzz") {
					continue // a benchmark or fuzz run: -run '^$' on purpose
				}
				r := runFlag.FindStringSubmatch(rest)
				if r == nil {
					continue
				}
				re, err := regexp.Compile(strings.Split(r[1], "/")[0])
				if err != nil {
					t.Errorf("%s:%d: go test %s -run %s: %v", name, i+1, pkg, r[1], err)
					continue
				}
				dir := filepath.Join(root, filepath.FromSlash(pkg))
				fs, ok := funcs[dir]
				if !ok {
					files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
					for _, f := range files {
						b, _ := os.ReadFile(f)
						for _, fm := range testFunc.FindAllStringSubmatch(string(b), -1) {
							fs = append(fs, fm[1])
						}
					}
					funcs[dir] = fs
				}
				checked++
				found := false
				for _, f := range fs {
					if re.MatchString(f) {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("%s:%d: `go test %s -run %s` names no test of %s", name, i+1, pkg, r[1], pkg)
				}
			}
		}
	}
	t.Logf("%d cited test commands checked", checked)
	if checked == 0 {
		t.Error("no `go test ./pkg -run X` found in the docs: the pattern no longer matches how they cite tests")
	}
}

var namedTest = regexp.MustCompile("`[^`]*`")
var testName = regexp.MustCompile(`\b((?:Test|Fuzz|Benchmark)[A-Z][A-Za-z0-9_]*)`)

// TestDocsNameExistingTests checks that every test, fuzz target or
// benchmark the docs name in code (`TestX`, `FuzzY`) exists somewhere in
// the repository.
func TestDocsNameExistingTests(t *testing.T) {
	root := moduleRoot(t)
	exists := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "out") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range testFunc.FindAllStringSubmatch(string(b), -1) {
			exists[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range docFiles(t, root) {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			for _, span := range namedTest.FindAllString(line, -1) {
				for _, m := range testName.FindAllStringSubmatch(span, -1) {
					if strings.Contains(span, "-run") || strings.Contains(span, "-fuzz") || strings.Contains(span, "-bench") {
						continue // a regular expression: TestDocsNameRealTests checks those
					}
					checked++
					if !exists[m[1]] {
						t.Errorf("%s:%d: %s is named but no test, fuzz target or benchmark of that name exists", name, i+1, m[1])
					}
				}
			}
		}
	}
	t.Logf("%d named tests checked", checked)
}

// TestFuzzingListsEveryTarget checks that docs/fuzzing.md's table lists
// every fuzz target of the repository, with its package.
func TestFuzzingListsEveryTarget(t *testing.T) {
	root := moduleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "fuzzing.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| `(Fuzz\\w+)` \\|")
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		listed[m[1]+" "+m[2]] = true
	}
	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(f \*testing\.F\)`)
	n := 0
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata" || d.Name() == "out") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		pkg, _ := filepath.Rel(root, filepath.Dir(p))
		if pkg == "." {
			pkg = "(root)"
		}
		for _, m := range fuzzFunc.FindAllStringSubmatch(string(b), -1) {
			n++
			if !listed[filepath.ToSlash(pkg)+" "+m[1]] {
				t.Errorf("docs/fuzzing.md does not list %s (%s): add its row", m[1], filepath.ToSlash(pkg))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d fuzz targets, %d rows", n, len(listed))
}

// TestDocsHaveNoConflictMarkers refuses a merge's conflict markers left in
// README.md or docs/*.md.
func TestDocsHaveNoConflictMarkers(t *testing.T) {
	root := moduleRoot(t)
	marker := regexp.MustCompile(`(?m)^(<<<<<<< |=======$|>>>>>>> )`)
	for _, name := range docFiles(t, root) {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		for _, loc := range marker.FindAllIndex(src, -1) {
			t.Errorf("%s:%d: a merge conflict marker", name, 1+strings.Count(string(src[:loc[0]]), "\n"))
		}
	}
}
