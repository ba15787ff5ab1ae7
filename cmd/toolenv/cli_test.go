package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/devtools/bench"
	"github.com/toolenv/toolenv/internal/pgtest"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/nl2api"
	"github.com/toolenv/toolenv/toolbench"
)

// run runs the CLI in-process and returns its exit code and output.
func run(t testing.TB, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(ctx, args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// serveInBackground starts "toolenv serve" with args on a port the
// kernel picks (--addr 127.0.0.1:0) and waits until it says it serves,
// reading the address from that line: a port chosen beforehand could be
// taken by another test's server in between, and a readiness poll would
// then take that server for this one. The returned stop ends it, fails
// the test (with serve's stderr) if serve exited with an error, and
// returns its exit code. A serve that exits before it serves fails the
// test at once; the wait has no deadline but the safety net (loading
// BIRD collections on a busy machine can take minutes).
func serveInBackground(t *testing.T, args ...string) (base string, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var code int
	stderr := newReadyWriter()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var out bytes.Buffer
		code = Run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--log-level", "warn"}, args...), strings.NewReader(""), &out, stderr)
	}()
	select {
	case <-stderr.ready:
	case <-done:
		cancel()
		t.Fatalf("serve exited (code %d) before it served:\n%s", code, stderr)
	case <-time.After(safetyNet):
		cancel()
		<-done
		t.Fatalf("serve did not come up within %s:\n%s", safetyNet, stderr)
	}
	return stderr.base(t), func() int {
		cancel()
		<-done
		if code != 0 {
			t.Errorf("serve exit code %d:\n%s", code, stderr)
		}
		return code
	}
}

// safetyNet bounds the waits whose length is not what a test measures
// (a server starting, an answer's round trip): far beyond what a loaded
// machine needs, so that only a hang reaches it.
const safetyNet = 5 * time.Minute

// readyWriter keeps what is written to it and closes ready once it has
// seen a line starting with marker.
type readyWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	ready  chan struct{}
	seen   bool
}

// servingMarker starts the line toolenv serve writes once it listens.
const servingMarker = "toolenv: serving "

// newReadyWriter is a readyWriter waiting for serve's servingMarker line.
func newReadyWriter() *readyWriter {
	return &readyWriter{marker: servingMarker, ready: make(chan struct{})}
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.seen && (strings.HasPrefix(w.buf.String(), w.marker) || strings.Contains(w.buf.String(), "\n"+w.marker)) {
		w.seen = true
		close(w.ready)
	}
	return len(p), nil
}

// servingURL finds the address in serve's "toolenv: serving N tools on
// http://host:port (...)" line.
var servingURL = regexp.MustCompile(`(?m)^` + servingMarker + `.* on (http://[^ ]+) `)

// base is the URL serve said it serves on; call it after ready.
func (w *readyWriter) base(t testing.TB) string {
	t.Helper()
	m := servingURL.FindStringSubmatch(w.String())
	if m == nil {
		t.Fatalf("serve's output names no address it serves on:\n%s", w)
	}
	return m[1]
}

func (w *readyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func postVirtual(t *testing.T, base string, body map[string]any) (map[string]any, http.Header) {
	t.Helper()
	raw, _ := json.Marshal(body)
	resp, err := http.Post(base+"/virtual", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var ans map[string]any
	if err := json.Unmarshal(b, &ans); err != nil {
		t.Fatalf("answer %s: %v", b, err)
	}
	return ans, resp.Header
}

func TestServeDemoOnAFreshMachine(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store.db")
	base, stop := serveInBackground(t, "--store", store)
	ans, hdr := postVirtual(t, base, map[string]any{
		"category": "Weather", "tool_name": "Skylark Weather", "api_name": "current_weather",
		"tool_input": `{"city": "Paris"}`, "strip": "", "toolbench_key": "",
	})
	if ans["error"] != "" || hdr.Get("X-Toolenv-Source") != "synthesizer" {
		t.Fatalf("answer %v from %s", ans, hdr.Get("X-Toolenv-Source"))
	}
	resp, err := http.Get(base + "/collections/demo/tools?format=openai")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("tools: %v %v", resp, err)
	}
	resp.Body.Close()
	if code := stop(); code != 0 {
		t.Fatalf("serve exited %d after Ctrl-C", code)
	}
	if _, err := os.Stat(store); err != nil {
		t.Fatalf("store not created at --store: %v", err)
	}
}

func TestExitCodes(t *testing.T) {
	ctx := context.Background()
	if code, _, errs := run(t, ctx, "serve", "--no-such-flag"); code != 2 || !strings.Contains(errs, "unknown flag") {
		t.Errorf("unknown flag: %d %s", code, errs)
	}
	if code, _, _ := run(t, ctx, "nonsense"); code != 2 {
		t.Errorf("unknown command: %d", code)
	}
	if code, _, errs := run(t, ctx, "cache", "stats", "--store", t.TempDir()); code == 0 || !strings.Contains(errs, "--store") {
		t.Errorf("store is a folder: %d %s", code, errs)
	}
	if code, _, errs := run(t, ctx, "serve", "--collection", filepath.Join(t.TempDir(), "missing")); code == 0 || !strings.Contains(errs, "missing") {
		t.Errorf("missing collection: %d %s", code, errs)
	}
}

// TestCacheImportServesStableToolBenchEntries writes a StableToolBench
// cache for real APIs of the shared query files — keys in Python repr,
// with key orders and number forms a live call will not repeat — imports
// it, and checks that /virtual serves every entry from the cache.
func TestCacheImportServesStableToolBenchEntries(t *testing.T) {
	docs := shareddata.Require(t, "stabletoolbench", "solvable_queries", "test_instruction")
	src, err := toolbench.Load(docs)
	if err != nil {
		t.Fatal(err)
	}
	coll := toolbench.NewCollection(src.Docs, toolbench.CollectionOptions{})
	cacheDir := t.TempDir()
	type probe struct {
		req  map[string]any
		want string
	}
	var probes []probe
	files := map[string]map[string]any{}
	for _, tool := range coll.Tools {
		if len(probes) == 40 {
			break
		}
		if len(tool.Input.Required) == 0 {
			continue
		}
		// The cached key: every required parameter, in reverse order, as
		// the client sent them (numbers as strings where declared numbers).
		args := map[string]any{}
		pyArgs := []string{}
		for i := len(tool.Input.Required) - 1; i >= 0; i-- {
			n := tool.Input.Required[i]
			v := fmt.Sprintf("v%d", i)
			if tool.Input.Prop(n).Type == "integer" {
				v = "7"
				args[n] = 7
				pyArgs = append(pyArgs, fmt.Sprintf("'%s': '7'", n))
				continue
			}
			args[n] = v
			pyArgs = append(pyArgs, fmt.Sprintf("'%s': '%s'", n, v))
		}
		key := "{" + strings.Join(pyArgs, ", ") + "}"
		std := tool.Meta
		path := filepath.Join(cacheDir, std["std_category"], std["std_tool"]+"_for_"+std["std_category"], std["api_name"]+".json")
		if files[path] == nil {
			files[path] = map[string]any{}
		}
		resp := fmt.Sprintf("{'answer': 'recorded for %s'}", tool.Name)
		files[path][key] = map[string]any{"error": "", "response": resp}
		ti, _ := json.Marshal(args)
		probes = append(probes, probe{req: map[string]any{"category": tool.Category, "tool_name": std["std_tool"], "api_name": std["api_name"], "tool_input": string(ti), "strip": "", "toolbench_key": ""}, want: resp})
	}
	for path, entries := range files {
		os.MkdirAll(filepath.Dir(path), 0o755)
		raw, _ := json.MarshalIndent(entries, "", "    ")
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// One unreadable key and one API that is not documented.
	bad := filepath.Join(cacheDir, "Data", "nosuch_for_Data", "nothing.json")
	os.MkdirAll(filepath.Dir(bad), 0o755)
	os.WriteFile(bad, []byte(`{"{'a': ": {"error": "", "response": "x"}, "{'q': 1}": {"error": "", "response": "y"}}`), 0o644)

	store := filepath.Join(t.TempDir(), "store.db")
	code, out, errs := run(t, context.Background(), "cache", "import", cacheDir, "--toolbench", docs, "--store", store, "--json")
	if code != 0 {
		t.Fatalf("import exited %d: %s", code, errs)
	}
	var rep importReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report %s: %v", out, err)
	}
	if rep.Imported != len(probes)+1 || len(rep.Problems) != 1 || len(rep.Unresolved) != 1 {
		t.Fatalf("report = %+v, want %d imported, 1 problem, 1 unresolved API", rep, len(probes)+1)
	}
	// Importing again keeps what is there.
	if code, out, _ := run(t, context.Background(), "cache", "import", cacheDir, "--toolbench", docs, "--store", store); code != 0 || !strings.Contains(out, "0 imported") {
		t.Fatalf("re-import: %d %s", code, out)
	}
	base, stop := serveInBackground(t, "--toolbench", docs, "--store", store)
	defer stop()
	for _, p := range probes {
		ans, hdr := postVirtual(t, base, p.req)
		if hdr.Get("X-Toolenv-Source") != "cache" || ans["response"] != p.want {
			t.Fatalf("%v: got %v from %s, want the imported %q", p.req, ans, hdr.Get("X-Toolenv-Source"), p.want)
		}
	}
	// Export in StableToolBench's layout and import into a fresh store: the
	// same entries come back.
	exportDir := t.TempDir()
	if code, _, errs := run(t, context.Background(), "cache", "export", exportDir, "--format", "stabletoolbench", "--toolbench", docs, "--store", store); code != 0 {
		t.Fatalf("export: %s", errs)
	}
	store2 := filepath.Join(t.TempDir(), "store2.db")
	code, out, _ = run(t, context.Background(), "cache", "import", exportDir, "--toolbench", docs, "--store", store2, "--json")
	var rep2 importReport
	json.Unmarshal([]byte(out), &rep2)
	if code != 0 || rep2.Imported != len(probes) || len(rep2.Problems) != 0 {
		t.Fatalf("round trip: %d %+v", code, rep2)
	}
	code, out, _ = run(t, context.Background(), "cache", "stats", "--store", store2)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("entries:  %d", len(probes))) {
		t.Fatalf("stats: %s", out)
	}
}

// TestMain lets the test binary stand in for toolenv when a command runs
// the program itself as a child (toolenv bench starts its servers so).
func TestMain(m *testing.M) {
	if os.Getenv("TOOLENV_RUN_MAIN") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM) // as main does
		code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	// Every command the tests run, and every toolenv they start, shares
	// one image cache of the run's own (docs/nl2sql.md): each database is
	// indexed once per run, not once per process, and nothing is read
	// from or left in the user's cache folder.
	images, err := os.MkdirTemp("", "toolenv-images-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(rodb.CacheEnv, images)
	// And one build cache (nl2api.BuildCache): a build bird the tests run
	// twice with the same flags is made once, and none is left in the
	// user's cache folder.
	builds, err := os.MkdirTemp("", "toolenv-builds-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(nl2api.BuildCacheEnv, builds)
	// pgtest.Main stops the PostgreSQL server the tests share (pgtest.DB:
	// one cluster for the test binary, a fresh database per test).
	pgtest.Main(m, removeBuiltBird, removeReferenceServer, removeSharedBuilds, func() { os.RemoveAll(images); os.RemoveAll(builds) })
}

// TestBenchMeasuresToolenvAndBaseline runs toolenv bench with each load
// generator: both servers answer every request; each measured round
// lasts --duration (whole seconds for wrk); the report names the load
// generator and its CPU per request (the client's cost, to tell whether
// it is the bottleneck) and the load average. Every round keeps both
// cores busy for its length, so the rounds are as short as each load
// generator takes them (wrk: whole seconds; the Go one: any length): what
// is checked does not depend on how long they are.
func TestBenchMeasuresToolenvAndBaseline(t *testing.T) {
	for _, c := range []struct {
		gen              string
		duration, warmup time.Duration
	}{{"wrk", time.Second, time.Second}, {"go", 300 * time.Millisecond, 100 * time.Millisecond}} {
		gen := c.gen
		t.Run(gen, func(t *testing.T) {
			if gen == "wrk" {
				requireWrk(t)
			}
			out := filepath.Join(t.TempDir(), "bench.json")
			code, stdout, stderr := run(t, context.Background(), "bench", "--duration", c.duration.String(), "--rounds", "2", "--warmup", c.warmup.String(), "--connections", "4",
				"--load-generator", gen, "--json", out)
			if code != 0 {
				t.Fatalf("bench exited %d: %s", code, stderr)
			}
			var rep bench.Report
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Toolenv == nil || rep.Baseline == nil || rep.Toolenv.Requests == 0 || rep.Baseline.Requests == 0 || rep.Ratio <= 0 || rep.Tools != 6 {
				t.Fatalf("report = %+v", rep)
			}
			if rep.Toolenv.Errors+rep.Toolenv.Non2xx+rep.Baseline.Errors+rep.Baseline.Non2xx != 0 {
				t.Fatalf("errors in the run: %+v %+v", rep.Toolenv, rep.Baseline)
			}
			// --duration is each round's measured time, not split over
			// the rounds: 2 rounds × 2 targets of at least --duration each.
			if len(rep.RoundSeconds) != 4 || rep.Duration != c.duration.String() {
				t.Fatalf("rounds %v of %s, want 4 of %s", rep.RoundSeconds, rep.Duration, c.duration)
			}
			for _, s := range rep.RoundSeconds {
				if s < c.duration.Seconds() {
					t.Errorf("a measured round of %.2f s, want --duration %s", s, c.duration)
				}
			}
			if !strings.HasPrefix(rep.LoadGenerator, gen) || rep.ToolenvClientCPU <= 0 || rep.BaselineClientCPU <= 0 || rep.ToolenvClientCores <= 0 ||
				len(rep.LoadAverage[0]) != 3 || len(rep.LoadAverage[1]) != 3 {
				t.Errorf("load generator %q, client CPU %v %v, cores %v, load %v", rep.LoadGenerator, rep.ToolenvClientCPU, rep.BaselineClientCPU, rep.ToolenvClientCores, rep.LoadAverage)
			}
			// The ratio is the median of the rounds' pairs, measured in
			// alternating order.
			if len(rep.RoundRatios) != 2 || rep.Ratio != (rep.RoundRatios[0]+rep.RoundRatios[1])/2 || rep.RatioOfMedians <= 0 || rep.CPURatio <= 0 {
				t.Errorf("ratio %v of rounds %v, of medians %v, by CPU %v", rep.Ratio, rep.RoundRatios, rep.RatioOfMedians, rep.CPURatio)
			}
			order := regexp.MustCompile(`round (\d)/2: (bare|toolenv)`).FindAllStringSubmatch(stderr, -1)
			var got []string
			for _, m := range order {
				got = append(got, m[1]+" "+m[2])
			}
			if want := "1 bare, 1 toolenv, 2 toolenv, 2 bare"; strings.Join(got, ", ") != want {
				t.Errorf("rounds in the order %q, want %q", got, want)
			}
			for _, w := range []string{"bare net/http handler", "toolenv POST /virtual", "Load from " + gen, "of client CPU per request", "Load average", "rounds' ratios", "By server CPU per request"} {
				if !strings.Contains(stdout, w) {
					t.Errorf("output lacks %q: %s", w, stdout)
				}
			}
		})
	}
}

// requireWrk skips a test that needs wrk where it is not installed, and
// fails it in CI (.ci/run installs it with scripts/install-wrk.sh).
func requireWrk(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("wrk"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("wrk is not installed (CI=1): run scripts/install-wrk.sh: %v", err)
		}
		t.Skipf("wrk is not installed: run scripts/install-wrk.sh (%v)", err)
	}
}

// TestBenchChildThatFailsToStart checks that a server child which exits
// at once is reported as exited (not as waited out until the start-up
// timeout), with what it said. The cause in the error proves it; no
// wall-clock bound is asserted.
func TestBenchChildThatFailsToStart(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad flag", []string{"serve", "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{"store that cannot be opened", []string{"serve", "--addr", "127.0.0.1:0", "--store", filepath.Join(t.TempDir(), "file", "store.db")}, "open store"},
	}
	// The second case's store sits below a regular file.
	if err := os.WriteFile(strings.TrimSuffix(tests[1].args[4], string(filepath.Separator)+"store.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, stop, err := bench.StartChild(context.Background(), "", tt.args, "serving ")
			if err == nil {
				stop()
				t.Fatal("a child that exited was reported as serving")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to hold the child's own message %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), "exited before serving") {
				t.Errorf("error = %v, want the child reported as exited before serving", err)
			}
		})
	}
}

// TestBenchHelpSaysHowItRuns checks that bench's help describes what it
// does: its servers are child processes, and --duration is split over
// the rounds.
func TestBenchHelpSaysHowItRuns(t *testing.T) {
	code, out, _ := run(t, context.Background(), "bench", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"child process", "--duration is the measured time of each round, per target", "wrk", "client's CPU time per"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "in-process") {
		t.Errorf("help says the servers run in-process; they are child processes:\n%s", out)
	}
}

// TestCacheExportOfAnotherCollection checks that entries imported under
// --collection NAME can be exported in StableToolBench's layout by naming
// the same collection.
func TestCacheExportOfAnotherCollection(t *testing.T) {
	docs := shareddata.Require(t, "stabletoolbench", "solvable_queries", "test_instruction", "G1_instruction.json")
	src, err := toolbench.Load(docs)
	if err != nil {
		t.Fatal(err)
	}
	d := src.Docs[0]
	cat, tool, api := toolbench.StandardizeCategory(d.CategoryName), toolbench.Standardize(d.ToolName), toolbench.APIName(d.APIName)
	cacheDir := t.TempDir()
	file := filepath.Join(cacheDir, cat, tool+"_for_"+cat, api+".json")
	os.MkdirAll(filepath.Dir(file), 0o755)
	if err := os.WriteFile(file, []byte(`{"{'x': 'y'}": {"error": "", "response": "recorded"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(t.TempDir(), "store.db")
	tests := []struct {
		name       string
		collection []string // --collection for import and export
	}{
		{"default collection", nil},
		{"named collection", []string{"--collection", "stb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := store + tt.name
			args := append([]string{"cache", "import", cacheDir, "--toolbench", docs, "--store", store}, tt.collection...)
			if code, out, errs := run(t, context.Background(), args...); code != 0 || !strings.Contains(out, "1 imported") {
				t.Fatalf("import: %d %s %s", code, out, errs)
			}
			out := t.TempDir()
			args = append([]string{"cache", "export", out, "--format", "stabletoolbench", "--toolbench", docs, "--store", store}, tt.collection...)
			code, _, errs := run(t, context.Background(), args...)
			if code != 0 {
				t.Fatalf("export exited %d: %s", code, errs)
			}
			data, err := os.ReadFile(filepath.Join(out, cat, tool+"_for_"+cat, api+".json"))
			if err != nil || !strings.Contains(string(data), "recorded") {
				t.Fatalf("exported file: %s %v (%s)", data, err, errs)
			}
		})
	}
}

// TestCacheCommandsDoNotCreateAStore checks that reading commands given a
// store path that does not exist (a typo) say so, rather than create an
// empty store and report it.
func TestCacheCommandsDoNotCreateAStore(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"stats", []string{"cache", "stats"}},
		{"export", []string{"cache", "export"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			missing := filepath.Join(t.TempDir(), "sub", "typo.db")
			code, _, errs := run(t, context.Background(), append(tt.args, "--store", missing)...)
			if code != 3 || !strings.Contains(errs, "no store at "+missing) {
				t.Errorf("exit %d, stderr %q; want a failure saying there is no store", code, errs)
			}
			if _, err := os.Stat(missing); err == nil {
				t.Errorf("%s created %s", tt.name, missing)
			}
		})
	}
}
