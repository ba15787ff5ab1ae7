package doctest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fixtureOptions runs a fixture page against the small checkout in
// testdata/root, with the real toolenv and model.
func fixtureOptions(t *testing.T) Options {
	t.Helper()
	shared := t.TempDir()
	if err := os.MkdirAll(filepath.Join(shared, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("testdata/root")
	if err != nil {
		t.Fatal(err)
	}
	return Options{
		Root:    root,
		Shared:  shared,
		Bin:     binDir(t),
		Model:   filepath.Join(binDir(t), "toolenv-docmodel"),
		Network: network(t),
		Timeout: time.Minute,
	}
}

func runFixture(t *testing.T, name string, opts Options) (*Report, error) {
	t.Helper()
	return RunFile(context.Background(), opts, filepath.Join("testdata", name), name)
}

func TestRunPasses(t *testing.T) {
	besidePages(t)
	for _, name := range []string{"pass.md", "exit.md", "illustrative.md", "server.md", "tour.md"} {
		t.Run(name, func(t *testing.T) {
			rep, err := runFixture(t, name, fixtureOptions(t))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Run == 0 {
				t.Fatalf("no block ran: %+v", rep)
			}
		})
	}
}

func TestRunCounts(t *testing.T) {
	besidePages(t)
	rep, err := runFixture(t, "illustrative.md", fixtureOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Run != 1 || rep.Illustrative != 1 {
		t.Errorf("run %d, illustrative %d; want 1 and 1", rep.Run, rep.Illustrative)
	}
	rep, err = runFixture(t, "pass.md", fixtureOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Run != 2 || rep.Illustrative != 0 || len(rep.Durations) != 2 || len(rep.CPU) != 2 {
		t.Errorf("pass.md: %+v, want 2 blocks run", rep)
	}
	// the costs name each run block by its fence's place
	src, err := os.ReadFile(filepath.Join("testdata", "pass.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := Parse("pass.md", src)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, b := range blocks {
		if b.Lang == "sh" && !b.Illustrative {
			want = append(want, b.Where())
		}
	}
	if !slices.Equal(rep.Blocks, want) {
		t.Errorf("pass.md: blocks %v, want %v", rep.Blocks, want)
	}
}

func TestRunFails(t *testing.T) {
	besidePages(t)
	tests := []struct {
		file string
		line int
		exit int
		want []string // in the message
	}{
		{"fail.md", 10, 2, []string{"fail.md:10: `ls examples/missing.txt`", "exit code 2, want 0", "the output before the failure", "No such file"}},
		{"exit-wrong.md", 3, 0, []string{"exit code 0, want 3"}},
		{"timeout.md", 3, -1, []string{"budget of 1s", "timeout=DUR"}},
		{"server-foreground.md", 4, 0, []string{"server-foreground.md:4: `toolenv serve` runs in the foreground"}},
		{"server-twice.md", 8, 0, []string{"a second server on 127.0.0.1:8080, which the server started at server-twice.md:4 still holds"}},
		{"server-dies.md", 4, 97, []string{"exited before it answered on 127.0.0.1:8080", "out/missing"}},
		{"leftover.md", 3, 0, []string{"server/testdata/fuzz/FuzzX/abc (new)"}},
		{"changed.md", 11, 0, []string{"changed.md:11: the block left the checkout changed", "examples/greeting.txt (changed)"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			_, err := runFixture(t, tc.file, fixtureOptions(t))
			if err == nil {
				t.Fatal("the page passed")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
			var f *Failure
			if errors.As(err, &f) {
				if f.Line != tc.line || f.Exit != tc.exit {
					t.Errorf("failure at line %d exit %d, want line %d exit %d", f.Line, f.Exit, tc.line, tc.exit)
				}
			}
			if strings.Contains(err.Error(), "NOT-REACHED") {
				t.Errorf("a command after the failure ran:\n%v", err)
			}
		})
	}
}

// TestTourChangeFails shows that changing one command of a working tour
// makes the page fail at that command.
func TestTourChangeFails(t *testing.T) {
	besidePages(t)
	src, err := os.ReadFile("testdata/tour.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := Parse("tour.md", src)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	rep, err := Run(context.Background(), fixtureOptions(t), "tour.md", blocks)
	if err != nil {
		t.Fatalf("the tour as written fails: %v", err)
	}
	// the run's interval holds its blocks and its folder's removal
	if rep.Start.Before(before) || rep.End.Before(rep.Start) || rep.End.Sub(rep.Start) < rep.Durations[0] {
		t.Errorf("run from %v to %v (test began %v, first block %v)", rep.Start, rep.End, before, rep.Durations[0])
	}
	if _, err := os.Stat(rep.Dir); !os.IsNotExist(err) {
		t.Errorf("the run's folder %s is still there at its end: %v", rep.Dir, err)
	}
	changed := strings.Replace(string(src), "weather_forecast?", "weather_forcast?", 1)
	blocks, err = Parse("tour.md", []byte(changed))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), fixtureOptions(t), "tour.md", blocks)
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("the changed tour: err = %v, want a failure", err)
	}
	if f.Line != 5 || !strings.Contains(f.Command, "weather_forcast") || f.Exit != 22 {
		t.Errorf("failure at line %d, command %q, exit %d; want line 5, the changed curl, exit 22 (curl -f on a 404)", f.Line, f.Command, f.Exit)
	}
}

// TestRunStopsEverything checks that the processes a page started are
// gone, and their addresses free, once the page has run.
func TestRunStopsEverything(t *testing.T) {
	besidePages(t)
	opts := fixtureOptions(t)
	opts.Keep = true
	rep, err := runFixture(t, "server.md", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(rep.Dir)
	b, err := os.ReadFile(filepath.Join(rep.Dir, ".doctest", "servers"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("servers started: %q, want 2", lines)
	}
	for _, l := range lines {
		var pid int
		var addr string
		var line int
		if _, err := fmtSscan(l, &pid, &addr, &line); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("the server started at line %d (pid %d) still runs", line, pid)
		}
	}
	if !opts.Network.Private {
		for _, a := range []string{"127.0.0.1:8080", "127.0.0.1:8081", ModelAddr} {
			if err := portFree(a); err != nil {
				t.Error(err)
			}
		}
	}
}

// TestRunLinks checks that installed folders the copy leaves out (a
// node_modules) are linked into it, and that a block may use them.
func TestRunLinks(t *testing.T) {
	besidePages(t)
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.txt"), "a\n")
	if err := os.MkdirAll(filepath.Join(root, "node_modules", "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "node_modules", "pkg", "index.js"), "// installed\n")
	opts := fixtureOptions(t)
	opts.Root = root
	opts.Links = []string{"node_modules", "not/installed"}
	blocks, err := Parse("links.md", []byte("```sh\ntest -f a.txt\ngrep -q installed node_modules/pkg/index.js\ntest ! -e not/installed\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), opts, "links.md", blocks); err != nil {
		t.Fatal(err)
	}
	opts.Links = nil
	if _, err := Run(context.Background(), opts, "links.md", blocks); err == nil {
		t.Error("without the link the block passed: node_modules was copied")
	}
}

// TestBlockPathWithoutToolenv: a page that installs toolenv itself runs
// with no folder of PATH that holds one, so that a README that forgot to
// install it fails as it would for a reader; with a Bin, Bin comes first.
func TestBlockPathWithoutToolenv(t *testing.T) {
	dir := t.TempDir()
	with, without, folder := filepath.Join(dir, "with"), filepath.Join(dir, "without"), filepath.Join(dir, "folder")
	for _, d := range []string{with, without, filepath.Join(folder, "toolenv")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(with, "toolenv"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := strings.Join([]string{with, without, folder, with}, string(os.PathListSeparator))
	if got, want := blockPath("", path), strings.Join([]string{without, folder}, string(os.PathListSeparator)); got != want {
		t.Errorf("no bin: PATH %q, want %q", got, want)
	}
	if got := blockPath("/bin-dir", path); got != "/bin-dir"+string(os.PathListSeparator)+path {
		t.Errorf("with bin: PATH %q", got)
	}
}

// TestPagesBuildWithTrimpath: the blocks' GOFLAGS keep the user's flags
// and add -trimpath once, and with them a package compiled in one folder
// is not compiled again in another (a page's go build finds what Build and
// the earlier pages compiled).
func TestPagesBuildWithTrimpath(t *testing.T) {
	t.Parallel() // its go commands run beside the pages, not before them
	for _, c := range []struct{ in, want string }{
		{"", "-trimpath"},
		{"-buildvcs=false", "-buildvcs=false -trimpath"},
		{"-trimpath -mod=mod", "-trimpath -mod=mod"},
		{"-trimpath=true", "-trimpath=true"},
	} {
		if got := trimpath(c.in); got != c.want {
			t.Errorf("trimpath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	env := blockEnv([]string{"GOFLAGS=-buildvcs=false", "PATH=" + os.Getenv("PATH")}, Options{}, "/h", "/t", "/s")
	var flags string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			flags = v
		}
	}
	if !slices.Contains(strings.Fields(flags), "-trimpath") {
		t.Fatalf("the blocks' GOFLAGS %q lack -trimpath", flags)
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	// the same module in three folders: what go test compiled in the
	// first (as .ci/run's go test -trimpath does), the builds in the
	// other two find in the cache (a fresh package, so that no earlier
	// test run cached it)
	pkg := fmt.Sprintf("package p\n\n// N is %d.\nconst N = %d\n\nfunc F() int { return N }\n", time.Now().UnixNano(), os.Getpid())
	test := "package p_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/m/p\"\n)\n\nfunc TestF(t *testing.T) {\n\tif p.F() != p.N {\n\t\tt.Fatal(p.F())\n\t}\n}\n"
	run := func(dir string, args ...string) string {
		t.Helper()
		for name, text := range map[string]string{"go.mod": "module example.com/m\n\ngo 1.21\n", "p/p.go": pkg, "p/p_test.go": test} {
			os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS="+flags, "GOWORK=off", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
		}
		return string(out)
	}
	first := run(t.TempDir(), "test", "-count=1", "-x", "./p")
	if !regexp.MustCompile(`/compile .* -p example\.com/m/p `).MatchString(first) {
		t.Fatalf("go test compiled no example.com/m/p; go test -x said:\n%s", first)
	}
	for i := range 2 {
		if out := run(t.TempDir(), "build", "-x", "./p"); strings.Contains(out, "/compile") {
			t.Errorf("build %d in another folder compiled the package again, with GOFLAGS %q:\n%s", i+1, flags, out)
		}
	}
}

func TestCostsHeaviestFirst(t *testing.T) {
	s := time.Second
	reps := []*Report{
		{File: "a.md", Blocks: []string{"a.md:1", "a.md:9"}, Durations: []time.Duration{2 * s, 3 * s}, CPU: []time.Duration{1 * s, 5 * s}},
		nil, // a page that failed before it ran
		{File: "b.md", Blocks: []string{"b.md:4"}, Durations: []time.Duration{4 * s}, CPU: []time.Duration{3 * s}},
		// a block that failed has a place but no cost yet
		{File: "c.md", Blocks: []string{"c.md:2", "c.md:7"}, Durations: []time.Duration{s}, CPU: []time.Duration{s}},
	}
	blocks, cpu, wall := Costs(reps)
	var got []string
	for _, b := range blocks {
		got = append(got, b.Where)
	}
	// equal CPU (a.md:1, c.md:2) is ordered by place
	if want := []string{"a.md:9", "b.md:4", "a.md:1", "c.md:2"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("order %v, want %v", got, want)
	}
	if cpu != 10*s || wall != 10*s {
		t.Errorf("totals cpu %v wall %v, want 10s and 10s", cpu, wall)
	}
	table := CostTable(reps, 2)
	for _, want := range []string{"| a.md:9 | 5.0 | 3.0 |", "| b.md:4 | 3.0 | 4.0 |", "| all 4 blocks | 10.0 | 10.0 |"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "a.md:1 ") {
		t.Errorf("table shows more than the 2 heaviest:\n%s", table)
	}
}

// TestTimeline: documents in the order they began, times from the origin,
// each document's blocks summed; reports that never began are left out.
func TestTimeline(t *testing.T) {
	s := time.Second
	origin := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	reps := []*Report{
		{File: "late.md", Start: origin.Add(30 * s), End: origin.Add(90 * s), Durations: []time.Duration{20 * s, 30 * s}, CPU: []time.Duration{2 * s, 3 * s}},
		nil,
		{File: "never.md"},
		{File: "first.md", Start: origin.Add(s / 2), End: origin.Add(40 * s), Durations: []time.Duration{35 * s}, CPU: []time.Duration{7 * s}},
	}
	got := Timeline(reps, origin)
	want := "| document | began s | ended s | blocks' wall s | blocks' CPU s |\n| --- | ---: | ---: | ---: | ---: |\n" +
		"| first.md | 0.5 | 40.0 | 35.0 | 7.0 |\n" +
		"| late.md | 30.0 | 90.0 | 50.0 | 5.0 |\n"
	if got != want {
		t.Errorf("timeline:\n%s\nwant:\n%s", got, want)
	}
}
