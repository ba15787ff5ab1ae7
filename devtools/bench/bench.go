package bench

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/devtools/loadgen"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/internal/buildinfo"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/toolbench"
	"github.com/toolenv/toolenv/validate"
)

// Options say what to measure. Their tags are the flags of "toolenv
// bench" (internal/configfile binds them).
type Options struct {
	// Docs are ToolBench docs to serve; nil serves the demo collection.
	Docs []string `json:"toolbench" flag:"toolbench" path:"file" help:"ToolBench docs to serve (default: the demo collection)"`
	// Connections, Duration (of each measured round, per target),
	// Warmup (before each) and Rounds shape the load; zero values mean
	// 64, 10s, 2s and 3. A run takes Rounds × targets × (Warmup +
	// Duration).
	Connections int           `json:"connections" flag:"connections" default:"64" help:"concurrent connections"`
	Duration    time.Duration `json:"duration" flag:"duration" default:"10s" help:"measured time of each round, per target (a run takes rounds × targets × (warm-up + duration); wrk counts whole seconds)"`
	Warmup      time.Duration `json:"warmup" flag:"warmup" default:"2s" help:"unmeasured warm-up before each measured round"`
	Rounds      int           `json:"rounds" flag:"rounds" default:"3" help:"alternate the targets over this many rounds of --duration each and report each one's median round"`
	// LoadGenerator is GeneratorAuto, GeneratorWrk or GeneratorGo;
	// Threads are wrk's threads (0: the CPUs, at most Connections).
	LoadGenerator string `json:"load_generator" flag:"load-generator" default:"auto" enum:"auto,wrk,go" help:"what sends the load: wrk (an external client in C, a child process), go (toolenv's own, in this process) or auto (wrk when it is on the PATH)"`
	Threads       int    `json:"threads" flag:"threads" help:"wrk's threads (default: the CPUs)"`
	// Baseline also measures a bare net/http handler returning the same
	// bytes.
	Baseline bool `json:"baseline" flag:"baseline" default:"true" help:"also measure a bare net/http handler returning the same bytes"`
	// BareHeaders has the bare handler send each answer's X-Toolenv-*
	// headers as toolenv does, so that both send the same response
	// bytes (but for the Date) and the comparison measures toolenv's
	// work, not the headers its answers carry; false sends the body and
	// Content-Type only (the baseline before 2026-12-05).
	BareHeaders bool `json:"bare_headers" flag:"bare-headers" default:"true" help:"the bare handler sends the same X-Toolenv-* headers as toolenv's answers (false: the body and Content-Type only, the baseline before 2026-12-05)"`
	// Target benchmarks a running toolenv at this base URL instead of
	// starting one (its cache must already hold the answers).
	Target string `json:"target" flag:"target" url:"http" help:"benchmark a running toolenv at this base URL instead of starting one (its cache must already hold the answers)"`
	// MaxTools bounds the tools whose calls are used; 0 means 2,000.
	MaxTools int `json:"max_tools" flag:"max-tools" default:"2000" help:"use at most this many tools' calls"`
	// CanonicalOnly records the answers under their canonical arguments
	// only, as answers recorded through MCP or REST are: a /virtual hit
	// then reads the store rather than the in-memory cache (which is
	// keyed by the client's exact key first).
	CanonicalOnly bool `json:"canonical_only" flag:"canonical-only" help:"record the answers under their canonical arguments only (as MCP and REST calls record them), not under the /virtual client's exact key"`
	// Executable is the toolenv program toolenv's server runs as (serve,
	// with TOOLENV_RUN_MAIN=1 set); "" means this program. A build to
	// compare with is measured by the same driver, against the same
	// baseline (this program's bench bare), this way.
	Executable string `json:"exe,omitempty" flag:"exe" path:"file" help:"the toolenv binary whose serve is measured (default: this one), to compare builds with the same driver and baseline"`
	// Log receives progress lines; nil discards them.
	Log io.Writer `json:"-"`
	// Logger logs the environment's loading; nil discards.
	Logger *slog.Logger `json:"-"`
	// Command is the command line, recorded in the report.
	Command []string `json:"-"`
}

func (o *Options) defaults() {
	if o.Connections == 0 {
		o.Connections = 64
	}
	if o.Duration == 0 {
		o.Duration = 10 * time.Second
	}
	if o.Warmup == 0 {
		o.Warmup = 2 * time.Second
	}
	if o.Rounds == 0 {
		o.Rounds = 3
	}
	if o.MaxTools == 0 {
		o.MaxTools = 2000
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}

// record is the configuration the report records.
func (o *Options) record() map[string]any {
	return map[string]any{"toolbench": o.Docs, "connections": o.Connections, "duration": o.Duration.String(), "warmup": o.Warmup.String(),
		"rounds": o.Rounds, "baseline": o.Baseline, "target": o.Target, "max_tools": o.MaxTools, "load_generator": o.LoadGenerator, "threads": o.Threads, "exe": o.Executable, "bare_headers": o.BareHeaders}
}

// Report is what the benchmark measured.
type Report struct {
	Date        string          `json:"date"`
	GoVersion   string          `json:"go_version"`
	CPUs        int             `json:"cpus"`
	Tools       int             `json:"tools"`
	Requests    int             `json:"distinct_requests"`
	Load        *LoadReport     `json:"load,omitempty"`
	Connections int             `json:"connections"`
	Duration    string          `json:"duration"`
	Toolenv     *loadgen.Result `json:"toolenv"`
	Baseline    *loadgen.Result `json:"baseline,omitempty"`
	// BaselineHeaders reports that the bare handler sent each answer's
	// X-Toolenv-* headers as toolenv does (Options.BareHeaders).
	BaselineHeaders bool `json:"baseline_headers"`
	// Ratio is toolenv's requests/s over the bare handler's: the median
	// of RoundRatios, each round's pair measured back to back (in turn
	// bare handler first and toolenv first), so that a change of the
	// machine's other load between rounds cancels out.
	// RatioOfMedians is Toolenv's over Baseline's requests/s.
	Ratio          float64   `json:"ratio,omitempty"`
	RoundRatios    []float64 `json:"round_ratios,omitempty"`
	RatioOfMedians float64   `json:"ratio_of_medians,omitempty"`
	// CPURatio is the bare handler's server CPU per request over
	// toolenv's (the median of the rounds' pairs): the share of the bare
	// handler's requests/s toolenv would serve were both bound by their
	// own CPU alone, which other load on the machine disturbs less than
	// requests/s.
	CPURatio float64 `json:"cpu_ratio,omitempty"`
	// ExtraCPU is toolenv's server CPU per request less the bare
	// handler's: the median of the rounds' pairs.
	ExtraCPU time.Duration `json:"extra_cpu_per_request_ns,omitempty"`
	Rounds   int           `json:"rounds"`
	// ToolenvCPU and BaselineCPU are each server's CPU time per request
	// (user + system, from /proc; medians over the rounds), which other
	// load on the machine disturbs far less than throughput.
	ToolenvCPU  time.Duration `json:"toolenv_cpu_per_request_ns,omitempty"`
	BaselineCPU time.Duration `json:"baseline_cpu_per_request_ns,omitempty"`
	// LoadGenerator names what sent the load. ToolenvClientCPU and
	// BaselineClientCPU are its CPU time per request against each
	// target, and ToolenvClientCores and BaselineClientCores the cores
	// it kept busy (medians over the rounds): a client near the
	// machine's cores, or costlier per request than the server, is the
	// bottleneck, and the ratio says less about the servers.
	LoadGenerator       string        `json:"load_generator"`
	ToolenvClientCPU    time.Duration `json:"toolenv_client_cpu_per_request_ns"`
	BaselineClientCPU   time.Duration `json:"baseline_client_cpu_per_request_ns,omitempty"`
	ToolenvClientCores  float64       `json:"toolenv_client_cores"`
	BaselineClientCores float64       `json:"baseline_client_cores,omitempty"`
	// RoundSeconds are the measured rounds' lengths, each target's in
	// turn; LoadAverage the machine's load average (1, 5, 15 min) at the
	// start and at the end of the run: other work skews the figures.
	RoundSeconds []float64    `json:"round_seconds"`
	LoadAverage  [2][]float64 `json:"load_average"`
	Target       string       `json:"target"`
	// Keys says how the answers were recorded: "exact" (under the
	// canonical arguments and the /virtual client's exact key, as a
	// /virtual call records them) or "canonical" (CanonicalOnly).
	Keys string `json:"keys,omitempty"`
	// Provenance is the toolenv that measured and the options.
	Provenance *toolenv.Provenance `json:"provenance,omitempty"`
}

// LoadReport is how long loading the ToolBench docs took and the memory
// held afterwards.
type LoadReport struct {
	Files    int     `json:"files"`
	APIs     int     `json:"apis"`
	Seconds  float64 `json:"seconds"`
	RSSMiB   float64 `json:"rss_mib"`
	HeapMiB  float64 `json:"heap_mib"`
	RSSDelta float64 `json:"rss_delta_mib"`
}

func rssMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// Run measures /virtual cache hits (and, with Baseline, the bare handler)
// as Options say, and returns the report.
func Run(ctx context.Context, o Options) (*Report, error) {
	o.defaults()
	docs, connections, duration, warmup, baseline, target, maxTools, rounds := o.Docs, o.Connections, o.Duration, o.Warmup, o.Baseline, o.Target, o.MaxTools, o.Rounds
	if rounds < 1 {
		return nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "--rounds must be at least 1")
	}
	rep := &Report{Provenance: buildinfo.Provenance(o.Command, o.record()), Date: time.Now().UTC().Format(time.RFC3339), GoVersion: runtime.Version(), CPUs: runtime.NumCPU(), Connections: connections, Duration: duration.String()}
	if len(docs) > 0 {
		runtime.GC()
		before := rssMiB()
		start := time.Now()
		src, err := toolbench.Load(docs...)
		if err != nil {
			return nil, err
		}
		c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
		toolbench.NewIndex(c)
		secs := time.Since(start).Seconds()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		rep.Load = &LoadReport{Files: src.Files, APIs: len(c.Tools), Seconds: secs, RSSMiB: rssMiB(), HeapMiB: float64(ms.HeapAlloc) / (1 << 20)}
		rep.Load.RSSDelta = rep.Load.RSSMiB - before
		fmt.Fprintf(o.Log, "loaded %d files, %d APIs in %.3fs; RSS %.1f MiB (+%.1f MiB), heap %.1f MiB\n", src.Files, len(c.Tools), secs, rep.Load.RSSMiB, rep.Load.RSSDelta, rep.Load.HeapMiB)
	}

	dir, err := os.MkdirTemp("", "toolenv-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	storePath := filepath.Join(dir, "store.db")
	env, err := environment.Open(ctx, &environment.Config{Store: storePath, ToolBench: docs, Timeout: time.Minute, Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	defer env.Close()

	// One recorded answer per tool, and the /virtual request that hits it.
	entries, bodies := hitCalls(env, maxTools, o.CanonicalOnly)
	if _, err := env.Store.PutMany(ctx, entries, true); err != nil {
		return nil, err
	}
	rep.Tools, rep.Requests = len(entries), len(bodies)

	// The servers under test run as child processes, so that each one's
	// CPU time per request can be read from /proc beside the throughput.
	base := target
	var toolenvProc *os.Process
	if base == "" {
		env.Close() // the child opens the same store
		args := []string{"serve", "--addr", "127.0.0.1:0", "--store", storePath, "--log-level", "warn"}
		for _, d := range docs {
			args = append(args, "--toolbench", d)
		}
		url, proc, stop, err := o.start(ctx, args, "serving ")
		if err != nil {
			return nil, err
		}
		defer stop()
		base, toolenvProc = url, proc
	}
	rep.Target = base
	if o.Target == "" {
		rep.Keys = "exact"
		if o.CanonicalOnly {
			rep.Keys = "canonical"
		}
	}
	answers := make([][]byte, len(bodies))
	headers := make([]http.Header, len(bodies))
	for i, b := range bodies {
		resp, err := http.Post(base+"/virtual", "application/json", bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		answers[i], _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		headers[i] = http.Header{}
		for k, vs := range resp.Header {
			if strings.HasPrefix(k, "X-Toolenv-") {
				headers[i][k] = vs
			}
		}
		if src := resp.Header.Get("X-Toolenv-Source"); src != "cache" {
			return nil, fmt.Errorf("bench: request %d was not a cache hit (source %q): %s", i, src, answers[i])
		}
	}
	drv, err := newDriver(&o, bodies, dir)
	if err != nil {
		return nil, err
	}
	// The report records what the rounds last: wrk counts whole
	// seconds (a warm-up of 0 is none).
	rep.LoadGenerator, rep.Duration = drv.name(), drv.effective(duration).String()
	if warmup > 0 {
		warmup = drv.effective(warmup)
	}
	duration = drv.effective(duration)
	var bareURL string
	var bareProc *os.Process
	if baseline {
		answersFile := filepath.Join(dir, "answers.json")
		if err := toolenv.WriteJSONFile(answersFile, answers); err != nil {
			return nil, err
		}
		args := []string{"bench", "bare", "--answers", answersFile}
		if o.BareHeaders {
			headersFile := filepath.Join(dir, "headers.json")
			if err := toolenv.WriteJSONFile(headersFile, headers); err != nil {
				return nil, err
			}
			args = append(args, "--headers", headersFile)
		}
		self := o
		self.Executable = "" // the baseline is this program's, whatever build is measured
		url, proc, stop, err := self.start(ctx, args, "listening ")
		if err != nil {
			return nil, err
		}
		defer stop()
		bareURL, bareProc = url, proc
		rep.BaselineHeaders = o.BareHeaders
	}
	// Alternate the two targets over several rounds and keep each one's
	// median round, so that other load on the machine hits both alike.
	type round struct {
		res                *loadgen.Result
		cpu, client, cores float64
	}
	var tRounds, bRounds []round
	measure := func(proc *os.Process, url string) (round, error) {
		if err := drv.warmup(ctx, url, warmup); err != nil {
			return round{}, err
		}
		before := procCPU(proc)
		res, client, err := drv.measure(ctx, url, duration)
		if err != nil {
			return round{}, err
		}
		if res.Requests == 0 {
			return round{}, fmt.Errorf("bench: no request completed against %s in %s", url, duration)
		}
		rep.RoundSeconds = append(rep.RoundSeconds, res.Elapsed.Seconds())
		n := float64(res.Requests)
		return round{res: res, cpu: float64(procCPU(proc)-before) / n, client: float64(client) / n, cores: client.Seconds() / res.Elapsed.Seconds()}, nil
	}
	rep.LoadAverage[0] = loadAverages()
	bare := func(r int) error {
		fmt.Fprintf(o.Log, "round %d/%d: bare net/http handler, %d connections, %s after %s of warm-up, load from %s…\n", r+1, rounds, connections, duration, warmup, drv.name())
		rd, err := measure(bareProc, bareURL)
		bRounds = append(bRounds, rd)
		return err
	}
	hits := func(r int) error {
		fmt.Fprintf(o.Log, "round %d/%d: toolenv /virtual cache hits over %d distinct calls, %d connections, %s after %s of warm-up…\n", r+1, rounds, len(bodies), connections, duration, warmup)
		rd, err := measure(toolenvProc, base)
		tRounds = append(tRounds, rd)
		return err
	}
	for r := 0; r < rounds; r++ {
		// Each round measures both targets back to back, in turn one
		// first and the other, so that neither is always the one a
		// change of the machine's load reaches first.
		steps := []func(int) error{hits}
		if baseline {
			steps = []func(int) error{bare, hits}
			if r%2 == 1 {
				steps = []func(int) error{hits, bare}
			}
		}
		for _, step := range steps {
			if err := step(r); err != nil {
				return nil, err
			}
		}
	}
	rep.LoadAverage[1] = loadAverages()
	medians := func(rs []round) (res *loadgen.Result, cpu, client time.Duration, cores float64) {
		var rr []*loadgen.Result
		var c, cl, co []float64
		for _, r := range rs {
			rr, c, cl, co = append(rr, r.res), append(c, r.cpu), append(cl, r.client), append(co, r.cores)
		}
		return medianRound(rr), median(c), median(cl), medianFloat(co)
	}
	rep.Rounds = rounds
	rep.Toolenv, rep.ToolenvCPU, rep.ToolenvClientCPU, rep.ToolenvClientCores = medians(tRounds)
	if toolenvProc == nil {
		rep.ToolenvCPU = 0
	}
	if baseline {
		rep.Baseline, rep.BaselineCPU, rep.BaselineClientCPU, rep.BaselineClientCores = medians(bRounds)
		rep.RatioOfMedians = rep.Toolenv.RPS / rep.Baseline.RPS
		var cpu, extra []float64
		for i := range tRounds {
			rep.RoundRatios = append(rep.RoundRatios, tRounds[i].res.RPS/bRounds[i].res.RPS)
			if tRounds[i].cpu > 0 && bRounds[i].cpu > 0 {
				cpu, extra = append(cpu, bRounds[i].cpu/tRounds[i].cpu), append(extra, tRounds[i].cpu-bRounds[i].cpu)
			}
		}
		rep.Ratio = trueMedian(rep.RoundRatios)
		if toolenvProc != nil && len(cpu) == len(tRounds) {
			rep.CPURatio, rep.ExtraCPU = trueMedian(cpu), time.Duration(trueMedian(extra))
		}
	}
	return rep, nil
}

// hitCalls returns one recorded answer per tool of env (at most maxTools)
// and the /virtual request body that hits it. The answers are recorded as
// a /virtual call records its answer (and as StableToolBench's cache
// imports): under the canonical arguments and the client's exact key,
// unless canonicalOnly.
func hitCalls(env *environment.Environment, maxTools int, canonicalOnly bool) (entries []*store.Entry, bodies [][]byte) {
	var v validate.Validator
	for _, c := range env.Registry.Collections() {
		for _, t := range c.Tools {
			if len(bodies) >= maxTools {
				break
			}
			args := sampleArgs(t)
			// The key a live call computes: after the collection's own
			// validation (lenient collections coerce "5" to 5).
			keyArgs := v.Args(t.Input, args, c.Policy.Validation != toolenv.ValidationStrict).Args
			canon, err := toolenv.Canonical(keyArgs)
			if err != nil {
				continue
			}
			resp := t.OutputExample
			if len(t.Examples) > 0 && len(t.Examples[0].Response) > 0 {
				resp = t.Examples[0].Response
			}
			if len(resp) == 0 {
				resp = json.RawMessage(`"recorded answer"`)
			}
			ti, _ := json.Marshal(args)
			body, _ := json.Marshal(map[string]any{
				"category": cmp.Or(t.Category, c.Name), "tool_name": cmp.Or(t.Meta["std_tool"], t.Group, c.Name),
				"api_name": cmp.Or(t.Meta["api_name"], t.Title, t.Name), "tool_input": string(ti), "strip": "", "toolbench_key": "",
			})
			exact := ""
			if !canonicalOnly {
				exact, _ = toolbench.ToolInputKey(body)
			}
			entries = append(entries, &store.Entry{Tool: t.ID, Args: string(canon), Exact: exact, Body: resp, Origin: "bench"})
			bodies = append(bodies, body)
		}
	}
	return entries, bodies
}

// medianRound returns the round with the median throughput.
func medianRound(rs []*loadgen.Result) *loadgen.Result {
	sorted := append([]*loadgen.Result(nil), rs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].RPS < sorted[j].RPS })
	return sorted[len(sorted)/2]
}

func median(xs []float64) time.Duration { return time.Duration(medianFloat(xs)) }

// trueMedian is the median of xs (the mean of the middle two of an even
// count); 0 for none.
func trueMedian(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

func medianFloat(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// procCPU returns a process's user + system CPU time so far, in
// nanoseconds (0 when /proc cannot tell): the sum of its threads' time on
// a CPU as the scheduler counts it (/proc/PID/task/*/schedstat, in
// nanoseconds), else /proc/PID/stat's, which counts in clock ticks of 10
// ms sampled by the timer interrupt: a short round of a server that ran
// between the ticks, as on a busy machine, read zero there.
func procCPU(p *os.Process) int64 {
	if p == nil {
		return 0
	}
	if ns, ok := schedCPU(p.Pid); ok {
		return ns
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid))
	if err != nil {
		return 0
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	const ticks = 100 // USER_HZ on Linux
	return (ut + st) * int64(time.Second) / ticks
}

// schedCPU sums the first field of /proc/PID/task/*/schedstat, each
// thread's time on a CPU in nanoseconds; false where the kernel does not
// keep it.
func schedCPU(pid int) (int64, bool) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return 0, false
	}
	var sum int64
	read := 0
	for _, t := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // a thread gone since the listing
		}
		f := strings.Fields(string(data))
		if len(f) == 0 {
			return 0, false
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		sum += ns
		read++
	}
	return sum, read > 0
}

// StartChild runs the toolenv program exe ("" for this program) with args
// and TOOLENV_RUN_MAIN=1 set, and waits for the line on its stdout or
// stderr that starts with marker and holds the URL it serves; see start.
func StartChild(ctx context.Context, exe string, args []string, marker string) (url string, proc *os.Process, stop func(), err error) {
	o := &Options{Executable: exe}
	return o.start(ctx, args, marker)
}

// start runs the toolenv program with args and waits for the line on its
// stdout or stderr that starts with marker and holds the URL it serves. A
// child that exits first is reported at once, with the last lines it wrote.
func (o *Options) start(ctx context.Context, args []string, marker string) (url string, proc *os.Process, stop func(), err error) {
	exe := o.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return "", nil, nil, fmt.Errorf("bench: %w", err)
		}
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), "TOOLENV_RUN_MAIN=1")
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return "", nil, nil, fmt.Errorf("bench: start %v: %w", args, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		pw.Close()
		close(exited)
	}()
	stop = func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}
	found := make(chan string, 1)
	scanned := make(chan struct{})
	var tail []string // the child's last lines, for the error when it fails
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			if len(tail) == 20 {
				tail = tail[1:]
			}
			tail = append(tail, line)
			if i := strings.Index(line, marker); i >= 0 {
				if j := strings.Index(line[i:], "http://"); j >= 0 {
					u := strings.Fields(line[i+j:])[0]
					select {
					case found <- u:
					default:
					}
				}
			}
		}
		io.Copy(io.Discard, pr) // never block the child on a line too long to scan
	}()
	select {
	case u := <-found:
		return u, cmd.Process, stop, nil
	case <-exited:
		<-scanned
		return "", nil, nil, fmt.Errorf("bench: %v exited before serving (%v):\n%s", args, waitErr, strings.Join(tail, "\n"))
	case <-time.After(60 * time.Second):
		stop()
		<-scanned
		return "", nil, nil, fmt.Errorf("bench: %v did not start serving within 60s:\n%s", args, strings.Join(tail, "\n"))
	}
}

// ServeBare is the baseline server: a minimal net/http handler on addr
// that reads each request and writes the recorded answers of answersFile
// in turn, with the headers of headersFile (a JSON array of header maps,
// one per answer; "" for none), until ctx ends. It writes "listening on
// URL" to w.
func ServeBare(ctx context.Context, answersFile, headersFile, addr string, w io.Writer) error {
	data, err := os.ReadFile(answersFile)
	if err != nil {
		return err
	}
	var answers [][]byte
	if err := json.Unmarshal(data, &answers); err != nil || len(answers) == 0 {
		return fmt.Errorf("bench bare: %s holds no answers: %v", answersFile, err)
	}
	var headers []http.Header
	if headersFile != "" {
		data, err := os.ReadFile(headersFile)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, &headers); err != nil || len(headers) != len(answers) {
			return fmt.Errorf("bench bare: %s does not hold one header map per answer (%d answers): %v", headersFile, len(answers), err)
		}
	}
	bare := bareHandler(answers, headers)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "listening on http://%s\n", ln.Addr())
	hs := &http.Server{Handler: bare, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); hs.Close() }()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// bareHandler is the baseline's handler: it reads each request's body
// and answers with answers in turn, each with its headers when headers
// is not nil. The headers are listed once, beforehand, and assigned
// under their canonical keys, the least a handler can do to send them.
func bareHandler(answers [][]byte, headers []http.Header) http.Handler {
	type field struct {
		key    string
		values []string
	}
	fields := make([][]field, len(answers))
	for i, h := range headers {
		for k, vs := range h {
			fields[i] = append(fields[i], field{k, vs})
		}
	}
	var n atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		i := n.Add(1) % uint64(len(answers))
		h := w.Header()
		h.Set("Content-Type", "application/json")
		for _, f := range fields[i] {
			h[f.key] = f.values
		}
		w.Write(answers[i])
	})
}

// Print writes the report as a Markdown table and sentences.
func Print(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "\n| target | requests/s | p50 | p90 | p99 | errors |\n|---|---:|---:|---:|---:|---:|\n")
	row := func(name string, r *loadgen.Result) {
		fmt.Fprintf(w, "| %s | %.0f | %s | %s | %s | %d |\n", name, r.RPS, r.P50.Round(time.Microsecond), r.P90.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.Errors+r.Non2xx)
	}
	if rep.Baseline != nil {
		name := "bare net/http handler (same body and headers)"
		if !rep.BaselineHeaders {
			name = "bare net/http handler (same body, Content-Type only)"
		}
		row(name, rep.Baseline)
	}
	hits := "toolenv POST /virtual (cache hits)"
	if rep.Keys == "canonical" {
		hits = "toolenv POST /virtual (cache hits on answers recorded under canonical arguments only)"
	}
	row(hits, rep.Toolenv)
	if rep.ToolenvCPU > 0 && rep.BaselineCPU > 0 {
		fmt.Fprintf(w, "\nServer CPU per request: toolenv %s, bare handler %s (%.0f%% of toolenv's cost is the bare HTTP work).\n",
			rep.ToolenvCPU.Round(100*time.Nanosecond), rep.BaselineCPU.Round(100*time.Nanosecond), 100*float64(rep.BaselineCPU)/float64(rep.ToolenvCPU))
	}
	if rep.Baseline != nil {
		fmt.Fprintf(w, "\ntoolenv serves %.0f%% of the bare handler's requests/s (the median of %d rounds' ratios, each round both servers back to back, in alternating order: %s; the ratio of the medians %.0f%%; %d connections, %d CPUs, %s, %d distinct calls over %d tools).\n",
			rep.Ratio*100, rep.Rounds, percents(rep.RoundRatios), rep.RatioOfMedians*100, rep.Connections, rep.CPUs, rep.GoVersion, rep.Requests, rep.Tools)
	}
	if rep.CPURatio > 0 {
		fmt.Fprintf(w, "By server CPU per request, toolenv would serve %.0f%% of the bare handler's requests/s were both bound by their own CPU; a hit costs %s of CPU more than the bare reply (each the median of the rounds' pairs).\n",
			rep.CPURatio*100, rep.ExtraCPU.Round(100*time.Nanosecond))
	}
	if rep.LoadGenerator != "" {
		fmt.Fprintf(w, "Load from %s: %s of client CPU per request against toolenv (%.2f cores busy)", rep.LoadGenerator, rep.ToolenvClientCPU.Round(100*time.Nanosecond), rep.ToolenvClientCores)
		if rep.Baseline != nil {
			fmt.Fprintf(w, ", %s against the bare handler (%.2f cores busy)", rep.BaselineClientCPU.Round(100*time.Nanosecond), rep.BaselineClientCores)
		}
		fmt.Fprintf(w, " of %d CPUs.\n", rep.CPUs)
	}
	if a, b := rep.LoadAverage[0], rep.LoadAverage[1]; len(a) == 3 && len(b) == 3 {
		fmt.Fprintf(w, "Load average %.2f %.2f %.2f at the start, %.2f %.2f %.2f at the end; rounds of %s.\n", a[0], a[1], a[2], b[0], b[1], b[2], roundsText(rep.RoundSeconds))
	}
	if rep.Load != nil {
		fmt.Fprintf(w, "Loading %d ToolBench files (%d APIs) took %.3fs; resident memory afterwards %.1f MiB.\n", rep.Load.Files, rep.Load.APIs, rep.Load.Seconds, rep.Load.RSSMiB)
	}
}

// percents lists ratios as percentages: "97, 101, 95 %".
func percents(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.0f", x*100)
	}
	return strings.Join(parts, ", ") + " %"
}

// roundsText lists the rounds' lengths: "8.0, 8.0, 8.0 s".
func roundsText(secs []float64) string {
	parts := make([]string, len(secs))
	for i, s := range secs {
		parts[i] = fmt.Sprintf("%.1f", s)
	}
	return strings.Join(parts, ", ") + " s"
}

// sampleArgs makes a valid call of t: a documented example if there is
// one, else each required parameter's example value (or a value of its
// type).
func sampleArgs(t *toolenv.Tool) map[string]any {
	if len(t.Examples) > 0 && t.Examples[0].Args != nil {
		return t.Examples[0].Args
	}
	args := map[string]any{}
	for _, n := range t.Input.Required {
		p := t.Input.Prop(n)
		var v any = "x"
		if p != nil {
			if raw, ok := p.Extra["example_value"]; ok {
				_ = toolenv.DecodeJSON(raw, &v)
			} else if len(p.Enum) > 0 {
				v = p.Enum[0]
			} else if p.Default != nil {
				v = p.Default
			} else {
				switch p.Type {
				case "integer", "number":
					v = json.Number("1")
				case "boolean":
					v = true
				}
			}
		}
		args[n] = v
	}
	return args
}
