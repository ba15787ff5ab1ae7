package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

	"github.com/spf13/cobra"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/internal/loadgen"
	"github.com/toolenv/toolenv/store"
	"github.com/toolenv/toolenv/toolbench"
	"github.com/toolenv/toolenv/validate"
)

// benchReport is what toolenv bench measured.
type benchReport struct {
	Date        string          `json:"date"`
	GoVersion   string          `json:"go_version"`
	CPUs        int             `json:"cpus"`
	Tools       int             `json:"tools"`
	Requests    int             `json:"distinct_requests"`
	Load        *loadReport     `json:"load,omitempty"`
	Connections int             `json:"connections"`
	Duration    string          `json:"duration"`
	Toolenv     *loadgen.Result `json:"toolenv"`
	Baseline    *loadgen.Result `json:"baseline,omitempty"`
	Ratio       float64         `json:"ratio,omitempty"`
	Rounds      int             `json:"rounds"`
	// ToolenvCPU and BaselineCPU are each server's CPU time per request
	// (user + system, from /proc; medians over the rounds), which other
	// load on the machine disturbs far less than throughput.
	ToolenvCPU  time.Duration `json:"toolenv_cpu_per_request_ns,omitempty"`
	BaselineCPU time.Duration `json:"baseline_cpu_per_request_ns,omitempty"`
	Target      string        `json:"target"`
}

type loadReport struct {
	Files    int     `json:"files"`
	APIs     int     `json:"apis"`
	Seconds  float64 `json:"seconds"`
	RSSMiB   float64 `json:"rss_mib"`
	HeapMiB  float64 `json:"heap_mib"`
	RSSDelta float64 `json:"rss_delta_mib"`
}

func newBenchCmd(e *env) *cobra.Command {
	var (
		docs        []string
		connections int
		duration    time.Duration
		warmup      time.Duration
		baseline    bool
		target      string
		jsonOut     string
		maxTools    int
		rounds      int
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure /virtual cache hits against a bare net/http handler returning the same bytes",
		Long: `Start "toolenv serve" as a child process on loopback, with a fresh store holding a
recorded answer for one call of every tool, then drive POST /virtual with a
closed-loop load generator (--connections concurrent connections for --duration)
and report requests/s, latency percentiles and the server's CPU time per request.
With --baseline (default) it measures, in the same run and the same way, a minimal
net/http handler (another child process) that returns the same response bytes,
alternating the two over --rounds, and reports toolenv's share of its throughput.
With --toolbench it first reports how long loading the docs takes and the
resident memory afterwards.`,
		Example: `  toolenv bench
  toolenv bench --toolbench ../shared/data/stabletoolbench/solvable_queries/test_instruction --connections 64 --duration 10s --json bench.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBench(cmd.Context(), e, docs, connections, duration, warmup, baseline, target, jsonOut, maxTools, rounds)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&docs, "toolbench", nil, "ToolBench docs to serve (default: the demo collection)")
	fs.IntVar(&connections, "connections", 64, "concurrent connections")
	fs.DurationVar(&duration, "duration", 10*time.Second, "measured time per target, split over --rounds")
	fs.DurationVar(&warmup, "warmup", 2*time.Second, "unmeasured warm-up per target and round")
	fs.BoolVar(&baseline, "baseline", true, "also measure a bare net/http handler returning the same bytes")
	fs.StringVar(&target, "target", "", "benchmark a running toolenv at this base URL instead of starting one (its cache must already hold the answers)")
	fs.StringVar(&jsonOut, "json", "", "also write the report as JSON to this file")
	fs.IntVar(&maxTools, "max-tools", 2000, "use at most this many tools' calls")
	fs.IntVar(&rounds, "rounds", 3, "alternate the targets over this many rounds (splitting --duration) and report each one's median round")
	cmd.AddCommand(newBenchBareCmd(e))
	return cmd
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

func runBench(ctx context.Context, e *env, docs []string, connections int, duration, warmup time.Duration, baseline bool, target, jsonOut string, maxTools, rounds int) error {
	if rounds < 1 {
		return usagef("--rounds must be at least 1")
	}
	rep := &benchReport{Date: time.Now().UTC().Format(time.RFC3339), GoVersion: runtime.Version(), CPUs: runtime.NumCPU(), Connections: connections, Duration: duration.String()}
	if len(docs) > 0 {
		runtime.GC()
		before := rssMiB()
		start := time.Now()
		src, err := toolbench.Load(docs...)
		if err != nil {
			return err
		}
		c := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
		toolbench.NewIndex(c)
		secs := time.Since(start).Seconds()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		rep.Load = &loadReport{Files: src.Files, APIs: len(c.Tools), Seconds: secs, RSSMiB: rssMiB(), HeapMiB: float64(ms.HeapAlloc) / (1 << 20)}
		rep.Load.RSSDelta = rep.Load.RSSMiB - before
		fmt.Fprintf(e.stderr, "loaded %d files, %d APIs in %.3fs; RSS %.1f MiB (+%.1f MiB), heap %.1f MiB\n", src.Files, len(c.Tools), secs, rep.Load.RSSMiB, rep.Load.RSSDelta, rep.Load.HeapMiB)
	}

	dir, err := os.MkdirTemp("", "toolenv-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	storePath := filepath.Join(dir, "store.db")
	env, err := environment.Open(ctx, &environment.Config{Store: storePath, ToolBench: docs, Timeout: time.Minute, Logger: e.logger()})
	if err != nil {
		return err
	}
	defer env.Close()

	// One recorded answer per tool, and the /virtual request that hits it.
	var entries []*store.Entry
	var bodies [][]byte
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
			entries = append(entries, &store.Entry{Tool: t.ID, Args: string(canon), Body: resp, Origin: "bench"})
			ti, _ := json.Marshal(args)
			body, _ := json.Marshal(map[string]any{
				"category": cmp.Or(t.Category, c.Name), "tool_name": cmp.Or(t.Meta["std_tool"], t.Group, c.Name),
				"api_name": cmp.Or(t.Meta["api_name"], t.Title, t.Name), "tool_input": string(ti), "strip": "", "toolbench_key": "",
			})
			bodies = append(bodies, body)
		}
	}
	if _, err := env.Store.PutMany(ctx, entries, true); err != nil {
		return err
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
		url, proc, stop, err := startChild(ctx, args, "serving ")
		if err != nil {
			return err
		}
		defer stop()
		base, toolenvProc = url, proc
	}
	rep.Target = base
	reqs := make([]loadgen.Request, len(bodies))
	hdr := http.Header{"Content-Type": {"application/json"}}
	answers := make([][]byte, len(bodies))
	for i, b := range bodies {
		reqs[i] = loadgen.Request{Method: http.MethodPost, URL: base + "/virtual", Body: b, Header: hdr}
		resp, err := http.Post(base+"/virtual", "application/json", bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		answers[i], _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if src := resp.Header.Get("X-Toolenv-Source"); src != "cache" {
			return fmt.Errorf("bench: request %d was not a cache hit (source %q): %s", i, src, answers[i])
		}
	}
	opts := loadgen.Options{Connections: connections, Duration: duration / time.Duration(rounds), Warmup: warmup}
	var breqs []loadgen.Request
	var bareProc *os.Process
	if baseline {
		answersFile := filepath.Join(dir, "answers.json")
		if err := toolenv.WriteJSONFile(answersFile, answers); err != nil {
			return err
		}
		url, proc, stop, err := startChild(ctx, []string{"bench", "bare", "--answers", answersFile}, "listening ")
		if err != nil {
			return err
		}
		defer stop()
		bareProc = proc
		breqs = make([]loadgen.Request, len(reqs))
		for i, r := range reqs {
			breqs[i] = r
			breqs[i].URL = url + "/virtual"
		}
	}
	// Alternate the two targets over several rounds and keep each one's
	// median round, so that other load on the machine hits both alike.
	var tRounds, bRounds []*loadgen.Result
	var tCPU, bCPU []float64
	measure := func(proc *os.Process, rs []loadgen.Request) (*loadgen.Result, float64, error) {
		before := procCPU(proc)
		res, err := loadgen.Run(ctx, rs, opts)
		if err != nil {
			return nil, 0, err
		}
		// CPU per request over the whole round, warm-up included.
		n := float64(res.Requests) * float64(opts.Duration+opts.Warmup) / float64(opts.Duration)
		return res, float64(procCPU(proc)-before) / n, nil
	}
	for r := 0; r < rounds; r++ {
		if baseline {
			fmt.Fprintf(e.stderr, "round %d/%d: bare net/http handler, %d connections, %s…\n", r+1, rounds, connections, opts.Duration)
			res, cpu, err := measure(bareProc, breqs)
			if err != nil {
				return err
			}
			bRounds, bCPU = append(bRounds, res), append(bCPU, cpu)
		}
		fmt.Fprintf(e.stderr, "round %d/%d: toolenv /virtual cache hits over %d distinct calls, %d connections, %s…\n", r+1, rounds, len(reqs), connections, opts.Duration)
		res, cpu, err := measure(toolenvProc, reqs)
		if err != nil {
			return err
		}
		tRounds, tCPU = append(tRounds, res), append(tCPU, cpu)
	}
	if toolenvProc != nil {
		rep.ToolenvCPU = median(tCPU)
	}
	if baseline {
		rep.BaselineCPU = median(bCPU)
	}
	rep.Rounds = rounds
	rep.Toolenv = medianRound(tRounds)
	if baseline {
		rep.Baseline = medianRound(bRounds)
		rep.Ratio = rep.Toolenv.RPS / rep.Baseline.RPS
	}
	printBench(e.stdout, rep)
	if jsonOut != "" {
		return toolenv.WriteJSONFile(jsonOut, rep)
	}
	return nil
}

// medianRound returns the round with the median throughput.
func medianRound(rs []*loadgen.Result) *loadgen.Result {
	sorted := append([]*loadgen.Result(nil), rs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].RPS < sorted[j].RPS })
	return sorted[len(sorted)/2]
}

func median(xs []float64) time.Duration {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return time.Duration(s[len(s)/2])
}

// procCPU returns a process's user + system CPU time so far, in
// nanoseconds (0 when /proc cannot tell).
func procCPU(p *os.Process) int64 {
	if p == nil {
		return 0
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

// startChild runs this program with args and waits for the line on its
// stdout or stderr that starts with marker and holds the URL it serves. A
// child that exits first is reported at once, with the last lines it wrote.
func startChild(ctx context.Context, args []string, marker string) (url string, proc *os.Process, stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, nil, fmt.Errorf("bench: %w", err)
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

// newBenchBareCmd is the baseline server: a minimal net/http handler that
// reads the request and writes recorded answers in turn.
func newBenchBareCmd(e *env) *cobra.Command {
	var answersFile, addr string
	cmd := &cobra.Command{
		Use:    "bare",
		Short:  "Serve the baseline for toolenv bench (a bare handler returning recorded bytes)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(answersFile)
			if err != nil {
				return err
			}
			var answers [][]byte
			if err := json.Unmarshal(data, &answers); err != nil || len(answers) == 0 {
				return fmt.Errorf("bench bare: %s holds no answers: %v", answersFile, err)
			}
			var n atomic.Uint64
			bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				w.Write(answers[n.Add(1)%uint64(len(answers))])
			})
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "listening on http://%s\n", ln.Addr())
			hs := &http.Server{Handler: bare, ReadHeaderTimeout: 10 * time.Second}
			go func() { <-cmd.Context().Done(); hs.Close() }()
			if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&answersFile, "answers", "", "JSON array of response bodies")
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "address to listen on")
	return cmd
}

func printBench(w io.Writer, rep *benchReport) {
	fmt.Fprintf(w, "\n| target | requests/s | p50 | p90 | p99 | errors |\n|---|---:|---:|---:|---:|---:|\n")
	row := func(name string, r *loadgen.Result) {
		fmt.Fprintf(w, "| %s | %.0f | %s | %s | %s | %d |\n", name, r.RPS, r.P50.Round(time.Microsecond), r.P90.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.Errors+r.Non2xx)
	}
	if rep.Baseline != nil {
		row("bare net/http handler (same bytes)", rep.Baseline)
	}
	row("toolenv POST /virtual (cache hits)", rep.Toolenv)
	if rep.ToolenvCPU > 0 && rep.BaselineCPU > 0 {
		fmt.Fprintf(w, "\nServer CPU per request: toolenv %s, bare handler %s (%.0f%% of toolenv's cost is the bare HTTP work).\n",
			rep.ToolenvCPU.Round(100*time.Nanosecond), rep.BaselineCPU.Round(100*time.Nanosecond), 100*float64(rep.BaselineCPU)/float64(rep.ToolenvCPU))
	}
	if rep.Baseline != nil {
		fmt.Fprintf(w, "\ntoolenv serves %.0f%% of the bare handler's requests/s (median of %d alternating rounds; %d connections, %d CPUs, %s, %d distinct calls over %d tools).\n",
			rep.Ratio*100, rep.Rounds, rep.Connections, rep.CPUs, rep.GoVersion, rep.Requests, rep.Tools)
	}
	if rep.Load != nil {
		fmt.Fprintf(w, "Loading %d ToolBench files (%d APIs) took %.3fs; resident memory afterwards %.1f MiB.\n", rep.Load.Files, rep.Load.APIs, rep.Load.Seconds, rep.Load.RSSMiB)
	}
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
