package doctest

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

//go:embed lib.sh
var libSh []byte

// DefaultTimeout is a block's budget when its fence sets none: a safety
// net against a block that hangs, not a measure of its speed. On a
// two-core machine kept busy by other work the heaviest blocks (the
// README's first go build of the whole module, docs/mapping.md's
// measurements) took more than 5 minutes; go test's -timeout still bounds
// the whole run.
const DefaultTimeout = 15 * time.Minute

// ModelAddr is where the loopback model listens while a file runs.
const ModelAddr = "127.0.0.1:8000"

// Options configure a run of a document's blocks.
type Options struct {
	// Root is the checkout whose files are copied into the run's folder.
	Root string
	// Checkout, when set, is a copy of Root's files made once
	// (NewCheckout) that the run's folder links instead of copying Root.
	Checkout *Checkout
	// Shared is the folder linked as ../shared beside the copy; empty
	// for none.
	Shared string
	// Bin is the folder put first on PATH: it holds toolenv. Empty puts
	// none there, and leaves out of PATH every folder that holds a
	// toolenv, so that the document installs it as a reader does.
	Bin string
	// Model is the loopback model server's binary (docmodel), started on
	// ModelAddr for the file; empty for none.
	Model string
	// Timeout is a block's default budget (DefaultTimeout when zero).
	Timeout time.Duration
	// Network picks where the file's servers listen.
	Network *Network
	// Env is added to the blocks' environment (KEY=VALUE).
	Env []string
	// Links are paths of the checkout, ignored by git, that the project's
	// set-up scripts install (testdata/npm/node_modules): where present
	// they are linked into the copy, as a reader who ran the scripts has
	// them.
	Links []string
	// Dir is the folder the run's temporary folders go in ("" for the
	// system's).
	Dir string
	// Keep leaves the run's folder in place (for a failing run).
	Keep bool
	// Logf, when set, reports progress (each block, its duration).
	Logf func(format string, args ...any)
	// After, when set, is called with the copy of the checkout once every
	// block has passed, before it is removed (to read the figures the
	// blocks wrote).
	After func(dir string) error
}

// Report is what a run of one document did.
type Report struct {
	// File is the document's name.
	File string
	// Run and Illustrative count the sh blocks run and shown only.
	Run, Illustrative int
	// Dir is the run's folder (removed unless Options.Keep).
	Dir string
	// Blocks are the run blocks' places (file:line), in order, with
	// their wall times in Durations and their CPU in CPU.
	Blocks []string
	// Durations are the run blocks' wall times, in order.
	Durations []time.Duration
	// CPU is the CPU time (user and system) the blocks' foreground
	// commands used, in order: the rusage of the block's bash and of every
	// process it waited for (not of the servers it left running in the
	// background, which the file stops at its end).
	CPU []time.Duration
	// Start and End are when the run of the document began (before its
	// folder was made) and ended (its servers stopped, its folder
	// removed): with other documents' reports, a timeline (Timeline).
	Start, End time.Time
}

// BlockCost is what one run block cost.
type BlockCost struct {
	// Where is the block's place (file:line).
	Where string
	// Wall and CPU are its wall time and the CPU time its foreground
	// commands used (see Report.CPU).
	Wall, CPU time.Duration
}

// Costs returns the run blocks' costs of the reports, the heaviest in CPU
// first, and their total CPU and wall time.
func Costs(reps []*Report) (blocks []BlockCost, cpu, wall time.Duration) {
	for _, r := range reps {
		if r == nil {
			continue
		}
		for i, w := range r.Blocks {
			if i >= len(r.CPU) || i >= len(r.Durations) {
				break
			}
			blocks = append(blocks, BlockCost{Where: w, Wall: r.Durations[i], CPU: r.CPU[i]})
			cpu += r.CPU[i]
			wall += r.Durations[i]
		}
	}
	sort.SliceStable(blocks, func(i, j int) bool {
		if blocks[i].CPU != blocks[j].CPU {
			return blocks[i].CPU > blocks[j].CPU
		}
		return blocks[i].Where < blocks[j].Where
	})
	return blocks, cpu, wall
}

// CostTable is a Markdown table of the n heaviest blocks (all when n <= 0)
// and the total, for the report of a run of the docs: what anyone tuning
// the docs' cost needs first.
func CostTable(reps []*Report, n int) string {
	blocks, cpu, wall := Costs(reps)
	var b strings.Builder
	fmt.Fprintf(&b, "| block | CPU s | wall s |\n| --- | ---: | ---: |\n")
	for i, c := range blocks {
		if n > 0 && i >= n {
			break
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f |\n", c.Where, c.CPU.Seconds(), c.Wall.Seconds())
	}
	fmt.Fprintf(&b, "| all %d blocks | %.1f | %.1f |\n", len(blocks), cpu.Seconds(), wall.Seconds())
	return b.String()
}

// Timeline is a Markdown table of the documents' runs in the order they
// began: when each began and ended, in seconds from origin, its blocks'
// wall and CPU time. It shows what a run of the docs waited for: the
// document that ended last, and how long before the first began.
func Timeline(reps []*Report, origin time.Time) string {
	var rs []*Report
	for _, r := range reps {
		if r != nil && !r.Start.IsZero() {
			rs = append(rs, r)
		}
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Start.Before(rs[j].Start) })
	var b strings.Builder
	fmt.Fprintf(&b, "| document | began s | ended s | blocks' wall s | blocks' CPU s |\n| --- | ---: | ---: | ---: | ---: |\n")
	for _, r := range rs {
		var wall, cpu time.Duration
		for _, d := range r.Durations {
			wall += d
		}
		for _, c := range r.CPU {
			cpu += c
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %.1f | %.1f |\n", r.File, r.Start.Sub(origin).Seconds(), r.End.Sub(origin).Seconds(), wall.Seconds(), cpu.Seconds())
	}
	return b.String()
}

// Failure is a block that did not end as its fence says.
type Failure struct {
	// Block is the failing block.
	Block Block
	// Line is the document line of the failing command (the block's
	// fence when unknown).
	Line int
	// Command is the failing command as bash saw it.
	Command string
	// Exit is the block's exit code (-1 when it was killed).
	Exit int
	// Reason says what went wrong beyond the exit code.
	Reason string
	// Tail is the end of the block's output.
	Tail string
}

func (f *Failure) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: ", f.Block.File, f.Line)
	if f.Command != "" {
		fmt.Fprintf(&b, "`%s` ", f.Command)
	}
	if f.Reason != "" {
		b.WriteString(f.Reason)
	} else {
		fmt.Fprintf(&b, "ended the block (fence at line %d) with exit code %d, want %d", f.Block.Line, f.Exit, f.Block.Exit)
	}
	if f.Tail != "" {
		b.WriteString("\n--- output, last lines ---\n")
		b.WriteString(f.Tail)
	}
	return b.String()
}

// RunFile parses the Markdown file at path and runs its sh blocks as the
// package documentation describes; name is how reports name it
// ("docs/eval.md"). It returns the first failure as a *Failure.
func RunFile(ctx context.Context, opts Options, path, name string) (*Report, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	blocks, err := Parse(name, src)
	if err != nil {
		return nil, err
	}
	return Run(ctx, opts, name, blocks)
}

// Run runs a document's blocks in a fresh folder.
func Run(ctx context.Context, opts Options, name string, blocks []Block) (rep *Report, err error) {
	rep = &Report{File: name, Start: time.Now()}
	defer func() { rep.End = time.Now() }()
	var run []Block
	for _, b := range blocks {
		switch {
		case b.Lang != "sh":
		case b.Illustrative:
			rep.Illustrative++
		default:
			run = append(run, b)
		}
	}
	rep.Run = len(run)
	if len(run) == 0 {
		return rep, nil
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	top, err := os.MkdirTemp(opts.Dir, "doctest-*")
	if err != nil {
		return rep, err
	}
	rep.Dir = top
	defer func() {
		if !opts.Keep {
			os.RemoveAll(top)
		}
	}()
	r := &runner{opts: opts, top: top, work: filepath.Join(top, "checkout"), state: filepath.Join(top, ".doctest")}
	if err := r.prepare(); err != nil {
		return rep, err
	}
	defer func() {
		if serr := r.stop(); serr != nil && err == nil {
			err = serr
		}
	}()
	if err := r.start(ctx); err != nil {
		return rep, err
	}
	for _, b := range run {
		if opts.Logf != nil {
			opts.Logf("%s: running", b.Where())
		}
		t0 := time.Now()
		cpu, err := r.block(ctx, b)
		if err != nil {
			return rep, err
		}
		rep.Blocks = append(rep.Blocks, b.Where())
		rep.Durations = append(rep.Durations, time.Since(t0))
		rep.CPU = append(rep.CPU, cpu)
		if opts.Logf != nil {
			opts.Logf("%s: ok in %.1f s (CPU %.1f s)", b.Where(), time.Since(t0).Seconds(), cpu.Seconds())
		}
		if err := r.snap.check(r.work); err != nil {
			return rep, fmt.Errorf("%s: %w", b.Where(), err)
		}
	}
	if opts.After != nil {
		if err := opts.After(r.work); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// runner holds one file's run.
type runner struct {
	opts  Options
	top   string // the run's folder
	work  string // the copy of the checkout
	state string // the harness's files
	lib   string
	snap  *snapshot
	env   []string
	ns    *namespace
	model *exec.Cmd
	pgids []int
	held  []startedServer
	n     int
}

func (r *runner) prepare() error {
	if err := os.MkdirAll(r.state, 0o755); err != nil {
		return err
	}
	var snap *snapshot
	var err error
	if r.opts.Checkout != nil {
		snap, err = r.opts.Checkout.link(r.work)
	} else {
		snap, err = copyTree(r.opts.Root, r.work)
	}
	if err != nil {
		return fmt.Errorf("copy the checkout: %w", err)
	}
	r.snap = snap
	for _, l := range r.opts.Links {
		src := filepath.Join(r.opts.Root, filepath.FromSlash(l))
		target, err := filepath.EvalSymlinks(src)
		if err != nil {
			continue // not installed here
		}
		dst := filepath.Join(r.work, filepath.FromSlash(l))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(target, dst); err != nil {
			return fmt.Errorf("link %s: %w", l, err)
		}
	}
	if r.opts.Shared != "" {
		if err := os.Symlink(r.opts.Shared, filepath.Join(r.top, "shared")); err != nil {
			return err
		}
	}
	r.lib = filepath.Join(r.state, "lib.sh")
	if err := os.WriteFile(r.lib, libSh, 0o644); err != nil {
		return err
	}
	home := filepath.Join(r.top, "home")
	tmp := filepath.Join(r.top, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(r.state, "cwd"), []byte(r.work+"\n"), 0o644); err != nil {
		return err
	}
	r.env = blockEnv(os.Environ(), r.opts, home, tmp, r.state)
	return nil
}

// blockEnv is the blocks' environment: the test's, without TOOLENV_
// settings (a reader starts without them), a home and temporary folder of
// the run's own (with the Go caches kept where they are), toolenv first
// on PATH (with no Bin: no toolenv on PATH at all).
func blockEnv(base []string, opts Options, home, tmp, state string) []string {
	var env []string
	keep := map[string]string{}
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "TOOLENV_"), strings.HasPrefix(k, "DOCTEST_"):
			continue
		case k == "HOME", k == "TMPDIR", k == "PATH", k == "PWD", k == "OLDPWD", k == "GOFLAGS":
			keep[k] = v
			continue
		}
		env = append(env, kv)
	}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if os.Getenv(k) == "" {
			if v := goEnv(k); v != "" {
				env = append(env, k+"="+v)
			}
		}
	}
	if os.Getenv("GOTOOLCHAIN") == "" {
		env = append(env, "GOTOOLCHAIN=local")
	}
	// The GOFLAGS of the user's go env file, lost with HOME, and -trimpath.
	env = append(env, "GOFLAGS="+trimpath(goEnv("GOFLAGS")))
	env = append(env,
		"HOME="+home,
		"TMPDIR="+tmp,
		"PATH="+blockPath(opts.Bin, keep["PATH"]),
		"DOCTEST_STATE="+state,
	)
	return append(env, opts.Env...)
}

// blockPath is the blocks' PATH: bin first, or, with no bin, path
// without the folders that hold a toolenv (a reader who has not installed
// it has none).
func blockPath(bin, path string) string {
	sep := string(os.PathListSeparator)
	if bin != "" {
		return bin + sep + path
	}
	var keep []string
	for _, d := range filepath.SplitList(path) {
		if st, err := os.Stat(filepath.Join(d, "toolenv")); err == nil && !st.IsDir() {
			continue
		}
		keep = append(keep, d)
	}
	return strings.Join(keep, sep)
}

// trimpath adds -trimpath to GOFLAGS. Go keys a package compiled
// without it by its folder, and every page runs in a folder of its own: a
// page's go build or go test would compile the whole module again (80 s of
// CPU for the README's go build of toolenv). With it, the packages are
// keyed by their content alone, and the build cache serves what Build and
// the pages' earlier runs compiled. It changes nothing a page shows: only
// the paths in the binaries' debug information and stack traces.
func trimpath(flags string) string {
	for _, f := range strings.Fields(flags) {
		if f == "-trimpath" || f == "-trimpath=true" || f == "--trimpath" {
			return flags
		}
	}
	return strings.TrimSpace(flags + " -trimpath")
}

func goEnv(k string) string {
	out, err := exec.Command("go", "env", k).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// start enters the file's network and starts the model.
func (r *runner) start(ctx context.Context) error {
	ns, err := r.opts.Network.open(ctx)
	if err != nil {
		return err
	}
	r.ns = ns
	if r.opts.Model == "" {
		return nil
	}
	args := ns.wrap([]string{r.opts.Model, "--addr", ModelAddr})
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = r.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	logf, err := os.Create(filepath.Join(r.state, "model.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the loopback model: %w", err)
	}
	r.model = cmd
	r.pgids = append(r.pgids, cmd.Process.Pid)
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			b, _ := os.ReadFile(logf.Name())
			ready <- fmt.Errorf("the loopback model did not start on %s: %s", ModelAddr, bytes.TrimSpace(b))
			return
		}
		_ = line
		ready <- nil
		io.Copy(io.Discard, out)
	}()
	select {
	case err := <-ready:
		return err
	case <-time.After(30 * time.Second):
		return fmt.Errorf("the loopback model did not start on %s within 30 s", ModelAddr)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// block runs one block and checks its exit code; it returns the CPU time
// the block's foreground commands used.
func (r *runner) block(ctx context.Context, b Block) (cpu time.Duration, err error) {
	r.n++
	cwd := r.work
	if c, err := os.ReadFile(filepath.Join(r.state, "cwd")); err == nil {
		cwd = strings.TrimSpace(string(c))
	}
	sc, err := buildScript(b, r.lib, r.held, cwd)
	if err != nil {
		return 0, err
	}
	path := filepath.Join(r.state, fmt.Sprintf("block-%d.sh", r.n))
	if err := os.WriteFile(path, []byte(sc.text), 0o644); err != nil {
		return 0, err
	}
	outPath := filepath.Join(r.state, fmt.Sprintf("block-%d.out", r.n))
	out, err := os.Create(outPath)
	if err != nil {
		return 0, err
	}
	defer out.Close()
	os.Remove(filepath.Join(r.state, "fail"))
	budget := b.Timeout
	if budget == 0 {
		budget = r.opts.Timeout
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < budget {
		budget = time.Until(dl)
	}
	args := r.ns.wrap([]string{"bash", path})
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = r.work
	cmd.Env = r.env
	cmd.Stdin = nil
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pgid := cmd.Process.Pid
	r.pgids = append(r.pgids, pgid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var (
		werr     error
		timedOut bool
	)
	timer := time.NewTimer(budget)
	defer timer.Stop()
	select {
	case werr = <-done:
	case <-timer.C:
		timedOut = true
		syscall.Kill(-pgid, syscall.SIGKILL)
		werr = <-done
	case <-ctx.Done():
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
		return 0, &Failure{Block: b, Line: b.Line, Exit: -1, Tail: tail(outPath, 20),
			Reason: fmt.Sprintf("was stopped: the test's time ran out (%v); run the docs' pages with a longer -timeout", ctx.Err())}
	}
	// the servers the block started stay for the file's later blocks
	r.held = append(r.held, sc.servers...)
	for _, f := range []string{"env", "cwd"} {
		os.Rename(filepath.Join(r.state, f+".next"), filepath.Join(r.state, f))
	}
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	code := 0
	var ee *exec.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &ee):
		code = ee.ExitCode()
	default:
		return cpu, werr
	}
	if !timedOut && code == b.Exit {
		return cpu, nil
	}
	f := &Failure{Block: b, Line: b.Line, Exit: code, Tail: tail(outPath, 40)}
	if fail, err := os.ReadFile(filepath.Join(r.state, "fail")); err == nil {
		parts := strings.SplitN(strings.TrimRight(string(fail), "\n"), "\t", 3)
		if len(parts) == 3 {
			if n, err := strconv.Atoi(parts[1]); err == nil && n > headerLines {
				f.Line = b.LineOf(n - headerLines - 1)
			}
			f.Command = parts[2]
		}
	}
	if timedOut {
		f.Exit = -1
		f.Reason = fmt.Sprintf("did not finish within the block's budget of %s (the fence at line %d can raise it: ```sh timeout=DUR)", budget, b.Line)
	} else if code == 0 {
		f.Command = ""
		f.Reason = fmt.Sprintf("the block (fence at line %d) ended with exit code 0, want %d", b.Line, b.Exit)
	}
	return cpu, f
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	b = bytes.TrimRight(b, "\n")
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// stop ends every process the file started and waits until they are gone
// and, on the host's network, until their addresses are free.
func (r *runner) stop() error {
	for _, p := range r.pgids {
		syscall.Kill(-p, syscall.SIGTERM)
	}
	if r.model != nil {
		done := make(chan struct{})
		go func() { r.model.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			r.model.Process.Kill()
			<-done
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range r.pgids {
		for syscall.Kill(-p, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if syscall.Kill(-p, 0) == nil {
			syscall.Kill(-p, syscall.SIGKILL)
		}
	}
	var err error
	if r.ns != nil {
		addrs := []string{}
		for _, s := range r.held {
			addrs = append(addrs, s.Addr)
		}
		if r.model != nil {
			addrs = append(addrs, ModelAddr)
		}
		err = r.ns.close(addrs)
	}
	return err
}
