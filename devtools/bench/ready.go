package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolenv/toolenv/devtools/toolbenchgen"
	"github.com/toolenv/toolenv/internal/progress"
)

// ReadyRun is one start of a toolenv serve process.
type ReadyRun struct {
	// ReadySeconds is the wall time from starting the process to its
	// listening (the line "serving N tools on http://…").
	ReadySeconds float64 `json:"ready_seconds"`
	// CPUSeconds is the process's CPU time (user + system) until then.
	CPUSeconds float64 `json:"cpu_seconds"`
	// RSSMiB is the resident memory when ready, PeakMiB the most it held
	// until then (VmHWM).
	RSSMiB  float64 `json:"rss_mib"`
	PeakMiB float64 `json:"peak_mib"`
	// SettledRSSMiB and SettledPeakMiB are the same --settle later (the
	// search_tools index is built in the background meanwhile).
	SettledRSSMiB  float64 `json:"settled_rss_mib"`
	SettledPeakMiB float64 `json:"settled_peak_mib"`
	// Tools is what /healthz said was served.
	Tools int `json:"tools"`
	// MCP, after settling: the first tools/list page (through the
	// go-sdk client over streamable HTTP), the first search_tools call
	// (it waits for the search index, which the server builds in the
	// background from ready) and a second one, and the resident memory
	// after them.
	ListPageSeconds    float64 `json:"list_page_seconds,omitempty"`
	ListPageTools      int     `json:"list_page_tools,omitempty"`
	FirstSearchSeconds float64 `json:"first_search_seconds,omitempty"`
	SearchSeconds      float64 `json:"search_seconds,omitempty"`
	AfterSearchRSSMiB  float64 `json:"after_search_rss_mib,omitempty"`
}

// ReadyReport is what Ready measured.
type ReadyReport struct {
	Date      string     `json:"date"`
	GoVersion string     `json:"go_version"`
	CPUs      int        `json:"cpus"`
	Load      float64    `json:"load_average_1m"`
	Exe       string     `json:"exe"`
	Docs      []string   `json:"docs"`
	APIs      int        `json:"apis"`
	Generated bool       `json:"generated"`
	Settle    string     `json:"settle"`
	Runs      []ReadyRun `json:"runs"`
	Median    ReadyRun   `json:"median"`
}

// ReadyOptions say what Ready measures. Their tags are the flags of
// "toolenv bench ready" (internal/configfile binds them).
type ReadyOptions struct {
	// APIs and Seed make the generated set (devtools/toolbenchgen) served
	// when Docs is empty; default 50,000 APIs, seed 1.
	APIs int    `json:"apis" flag:"apis" default:"50000" help:"APIs in the generated set (ToolBench has 49,937)"`
	Seed uint64 `json:"seed" flag:"seed" default:"1" help:"seed of the generated set"`
	// Docs are ToolBench docs to serve instead of a generated set.
	Docs []string `json:"toolbench" flag:"toolbench" path:"file" help:"serve these ToolBench docs instead of a generated set (repeatable)"`
	// Runs is how many times the server is started (default 3); the
	// median run is the figure.
	Runs int `json:"runs" flag:"runs" default:"3" help:"start the server this many times; the median run is reported"`
	// Settle is how long after ready the memory is read again.
	Settle time.Duration `json:"settle" flag:"settle" default:"5s" help:"read the memory again this long after ready"`
	// Executable is the toolenv binary to measure ("" this program).
	Executable string `json:"exe" flag:"exe" path:"file" help:"the toolenv binary to measure (default: this one)"`
	// DataDir keeps generated sets between runs (default the
	// temporary folder).
	DataDir string `json:"data_dir" flag:"data-dir" path:"file" help:"where generated sets are kept between runs"`
	// Log receives progress lines; nil discards.
	Log io.Writer `json:"-"`
}

// Ready starts "toolenv serve" over a large ToolBench set as a child
// process Runs times, each with a fresh store, and measures each start:
// the wall time until it listens, its CPU time until then, its resident
// memory when ready and Settle later and its peak, then a tools/list page
// and search_tools through the go-sdk client and the memory after them.
func Ready(ctx context.Context, o ReadyOptions) (*ReadyReport, error) {
	if o.APIs <= 0 {
		o.APIs = 50000
	}
	if o.Runs <= 0 {
		o.Runs = 3
	}
	if o.DataDir == "" {
		o.DataDir = os.TempDir()
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	rep := &ReadyReport{Date: time.Now().UTC().Format(time.RFC3339), GoVersion: runtime.Version(), CPUs: runtime.NumCPU(), Load: loadAverage(), Exe: o.Executable, Docs: o.Docs}
	exe := o.Executable
	if exe == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("bench ready: %w", err)
		}
		exe = self
	}
	if len(o.Docs) == 0 {
		dir, err := generatedSet(ctx, o.Log, o.DataDir, o.APIs, o.Seed)
		if err != nil {
			return nil, err
		}
		rep.Docs, rep.APIs, rep.Generated = []string{dir}, o.APIs, true
	}
	rep.Settle = o.Settle.String()
	for r := range o.Runs {
		run, err := measureReady(ctx, o.Executable, rep.Docs, o.Settle)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(o.Log, "run %d/%d: ready in %.2fs (%.2fs CPU), %d tools; resident %.0f MiB (peak %.0f), %s later %.0f MiB (peak %.0f); tools/list page of %d in %.3fs; first search_tools %.2fs, next %.3fs; then %.0f MiB\n",
			r+1, o.Runs, run.ReadySeconds, run.CPUSeconds, run.Tools, run.RSSMiB, run.PeakMiB, o.Settle, run.SettledRSSMiB, run.SettledPeakMiB,
			run.ListPageTools, run.ListPageSeconds, run.FirstSearchSeconds, run.SearchSeconds, run.AfterSearchRSSMiB)
		rep.Runs = append(rep.Runs, *run)
	}
	if rep.APIs == 0 {
		rep.APIs = rep.Runs[0].Tools
	}
	sorted := append([]ReadyRun(nil), rep.Runs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ReadySeconds < sorted[j].ReadySeconds })
	rep.Median = sorted[len(sorted)/2]
	rep.Exe = filepath.Base(exe)
	return rep, nil
}

// PrintReady writes the median run as a Markdown table.
func PrintReady(w io.Writer, rep *ReadyReport) {
	m := rep.Median
	fmt.Fprintf(w, "\n| APIs | ready | CPU until ready | resident when ready | peak | resident %s later | tools/list page | first search_tools | next | resident after |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n", rep.Settle)
	fmt.Fprintf(w, "| %d | %.2f s | %.2f s | %.0f MiB | %.0f MiB | %.0f MiB | %.0f ms (%d tools) | %.2f s | %.0f ms | %.0f MiB |\n", rep.APIs, m.ReadySeconds, m.CPUSeconds, m.RSSMiB, m.PeakMiB, m.SettledRSSMiB,
		1000*m.ListPageSeconds, m.ListPageTools, m.FirstSearchSeconds, 1000*m.SearchSeconds, m.AfterSearchRSSMiB)
	fmt.Fprintf(w, "\nMedian of %d starts of %s serve (%d CPUs, load average %.1f, %s).\n", len(rep.Runs), rep.Exe, rep.CPUs, rep.Load, rep.GoVersion)
}

// generatedSet returns the folder of the generated set of n APIs, writing
// it first when it is not there yet.
func generatedSet(ctx context.Context, log io.Writer, dataDir string, n int, seed uint64) (string, error) {
	dir := filepath.Join(dataDir, fmt.Sprintf("toolenv-toolbenchgen-v%d-%d-seed%d", toolbenchgen.Version, n, seed))
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(dataDir, "toolenv-toolbenchgen-")
	if err != nil {
		return "", fmt.Errorf("bench ready: %w", err)
	}
	defer os.RemoveAll(tmp)
	bar := progress.New(log, n, "generating ToolBench-format APIs")
	last := 0
	if _, err := toolbenchgen.WriteTree(ctx, filepath.Join(tmp, "tools"), toolbenchgen.Options{APIs: n, Seed: seed}, func(done int) {
		bar.Add(done - last)
		last = done
	}); err != nil {
		return "", err
	}
	bar.Finish()
	if err := os.Rename(filepath.Join(tmp, "tools"), dir); err != nil && !os.IsExist(err) {
		return "", fmt.Errorf("bench ready: %w", err)
	}
	return dir, nil
}

// measureReady starts exe serve over docs once.
func measureReady(ctx context.Context, exe string, docs []string, settle time.Duration) (*ReadyRun, error) {
	dir, err := os.MkdirTemp("", "toolenv-bench-ready-")
	if err != nil {
		return nil, fmt.Errorf("bench ready: %w", err)
	}
	defer os.RemoveAll(dir)
	args := []string{"serve", "--addr", "127.0.0.1:0", "--store", filepath.Join(dir, "store.db"), "--log-level", "warn"}
	for _, d := range docs {
		args = append(args, "--toolbench", d)
	}
	start := time.Now()
	url, proc, stop, err := StartChild(ctx, exe, args, "serving ")
	if err != nil {
		return nil, err
	}
	defer stop()
	run := &ReadyRun{ReadySeconds: time.Since(start).Seconds(), CPUSeconds: float64(procCPU(proc)) / 1e9}
	run.RSSMiB, run.PeakMiB = procMemMiB(proc)
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		return nil, fmt.Errorf("bench ready: %w", err)
	}
	var health struct{ Tools int }
	err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&health)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("bench ready: /healthz: %w", err)
	}
	run.Tools = health.Tools
	select {
	case <-time.After(settle):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	run.SettledRSSMiB, run.SettledPeakMiB = procMemMiB(proc)
	if err := measureMCP(ctx, url, run); err != nil {
		return nil, err
	}
	run.AfterSearchRSSMiB, _ = procMemMiB(proc)
	return run, nil
}

// measureMCP times a tools/list page and search_tools through the go-sdk
// client (search_tools only where the server offers it).
func measureMCP(ctx context.Context, url string, run *ReadyRun) error {
	client := mcp.NewClient(&mcp.Implementation{Name: "toolenv-bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, nil)
	if err != nil {
		return fmt.Errorf("bench ready: MCP: %w", err)
	}
	defer cs.Close()
	start := time.Now()
	page, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("bench ready: tools/list: %w", err)
	}
	run.ListPageSeconds, run.ListPageTools = time.Since(start).Seconds(), len(page.Tools)
	offered := false
	for _, t := range page.Tools {
		offered = offered || t.Name == "search_tools"
	}
	if !offered && page.NextCursor == "" {
		return nil
	}
	for i, q := range []string{"weather forecast for a city", "convert currency exchange rates"} {
		start := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": q, "limit": 10}})
		if err != nil {
			return nil // an older server without search_tools
		}
		if res.IsError {
			return fmt.Errorf("bench ready: search_tools: %v", res.Content)
		}
		if i == 0 {
			run.FirstSearchSeconds = time.Since(start).Seconds()
		} else {
			run.SearchSeconds = time.Since(start).Seconds()
		}
	}
	return nil
}

// procMemMiB returns a process's resident memory and its peak (VmRSS,
// VmHWM from /proc), in MiB; zeros where /proc cannot tell.
func procMemMiB(p *os.Process) (rss, peak float64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		for key, dst := range map[string]*float64{"VmRSS:": &rss, "VmHWM:": &peak} {
			if v, ok := strings.CutPrefix(line, key); ok {
				kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				*dst = kb / 1024
			}
		}
	}
	return rss, peak
}

// loadAverage is the machine's one-minute load average (0 when unknown):
// figures taken under load say so.
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(data))[0], 64)
	return f
}
