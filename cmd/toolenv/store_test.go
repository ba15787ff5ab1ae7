package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolenv/toolenv/internal/pgtest"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	_ "modernc.org/sqlite"
)

// measureTools writes a ToolBench tool set with one API, measure (length
// a required NUMBER, unit an optional STRING), and returns its folder.
func measureTools(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tools")
	doc := map[string]any{
		"tool_name": "measurekit", "name": "measurekit", "title": "measurekit", "tool_description": "Measures things.",
		"host": "measurekit.p.rapidapi.com",
		"api_list": []any{map[string]any{
			"name": "measure", "url": "https://measurekit.p.rapidapi.com/measure", "description": "Measure a length.", "method": "GET",
			"required_parameters": []any{map[string]any{"name": "length", "type": "NUMBER", "description": "the length", "default": ""}},
			"optional_parameters": []any{map[string]any{"name": "unit", "type": "STRING", "description": "the unit", "default": "m"}},
		}},
	}
	raw, _ := json.Marshal(doc)
	if err := os.MkdirAll(filepath.Join(dir, "Tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Tools", "measurekit.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func measureCall(toolInput string) map[string]any {
	return map[string]any{"category": "Tools", "tool_name": "measurekit", "api_name": "measure", "tool_input": toolInput, "strip": "", "toolbench_key": ""}
}

// TestCacheImportKeepsEveryExactKey (issue 9 item 12): recorded keys that
// differ only in value types or order, with different answers, are all
// imported and each is served to the client that sends it; a key nobody
// recorded gets the canonical (first recorded) answer.
func TestCacheImportKeepsEveryExactKey(t *testing.T) {
	ctx := context.Background()
	tools := measureTools(t)
	cacheDir := t.TempDir()
	file := filepath.Join(cacheDir, "Tools", "measurekit_for_Tools", "measure.json")
	os.MkdirAll(filepath.Dir(file), 0o755)
	recorded := []struct{ key, toolInput, answer string }{
		{"{'length': 7}", `{"length": 7}`, "seven as a number"},
		{"{'length': '7'}", `{"length": "7"}`, "seven as a string"},
		{"{'length': 7, 'unit': 'm'}", `{"length": 7, "unit": "m"}`, "length then unit"},
		{"{'unit': 'm', 'length': 7}", `{"unit": "m", "length": 7}`, "unit then length"},
	}
	var text strings.Builder
	text.WriteString("{")
	for i, r := range recorded {
		if i > 0 {
			text.WriteString(", ")
		}
		fmt.Fprintf(&text, "%q: {\"error\": \"\", \"response\": %q}", r.key, r.answer)
	}
	text.WriteString("}")
	if err := os.WriteFile(file, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	st := filepath.Join(t.TempDir(), "store.db")
	code, out, errs := run(t, ctx, "cache", "import", cacheDir, "--toolbench", tools, "--store", st, "--json")
	if code != 0 {
		t.Fatalf("import: %d %s", code, errs)
	}
	var rep importReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Imported != len(recorded) || rep.Kept != 0 {
		t.Fatalf("import report %s (%v): want all %d keys imported", out, err, len(recorded))
	}
	base, stop := serveInBackground(t, "--toolbench", tools, "--store", st)
	defer stop()
	for _, r := range recorded {
		ans, hdr := postVirtual(t, base, measureCall(r.toolInput))
		if ans["response"] != r.answer || hdr.Get("X-Toolenv-Source") != "cache" {
			t.Errorf("tool_input %s: got %v from %s, want %q recorded under %s", r.toolInput, ans["response"], hdr.Get("X-Toolenv-Source"), r.answer, r.key)
		}
	}
	// Not recorded as sent: the canonical answer of its coerced arguments.
	for _, ti := range []string{`{"length": 7.0}`, `{"length":7}`} {
		ans, hdr := postVirtual(t, base, measureCall(ti))
		if hdr.Get("X-Toolenv-Source") != "cache" || (ans["response"] != recorded[0].answer && ans["response"] != recorded[1].answer) {
			t.Errorf("tool_input %s: got %v from %s, want the canonical recorded answer", ti, ans["response"], hdr.Get("X-Toolenv-Source"))
		}
	}
	// Export writes every recorded key back as it was.
	exported := t.TempDir()
	if code, _, errs := run(t, ctx, "cache", "export", exported, "--format", "stabletoolbench", "--toolbench", tools, "--store", st); code != 0 {
		t.Fatalf("export: %s", errs)
	}
	raw, err := os.ReadFile(filepath.Join(exported, "Tools", "measurekit_for_Tools", "measure.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]struct {
		Response string `json:"response"`
	}
	if err := json.Unmarshal(raw, &back); err != nil || len(back) != len(recorded) {
		t.Fatalf("exported file %s (%v): want the %d recorded keys", raw, err, len(recorded))
	}
	for _, r := range recorded {
		if back[r.key].Response != r.answer {
			t.Errorf("exported key %s: %q, want %q", r.key, back[r.key].Response, r.answer)
		}
	}
	code, out, _ = run(t, ctx, "cache", "stats", "--store", st, "--json")
	var s struct {
		Entries   int `json:"entries"`
		ExactOnly int `json:"exact_only"`
	}
	if json.Unmarshal([]byte(out), &s); code != 0 || s.Entries != 4 || s.ExactOnly != 2 {
		t.Fatalf("stats %s: want 4 entries, 2 of them kept only under their exact key", out)
	}
}

// TestStoreMigrateAndSkew: store migrate brings an old store up to date;
// a store a newer toolenv migrated is refused by serve, with a message.
func TestStoreMigrateAndSkew(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	// A store written before schema versions existed.
	for _, q := range []string{
		`CREATE TABLE cache (tool TEXT NOT NULL, args TEXT NOT NULL, status TEXT NOT NULL, body BLOB, error TEXT NOT NULL DEFAULT '', origin TEXT NOT NULL DEFAULT '', created INTEGER NOT NULL, PRIMARY KEY (tool, args)) WITHOUT ROWID`,
		`CREATE TABLE records (key TEXT PRIMARY KEY, request BLOB NOT NULL, response BLOB NOT NULL, created INTEGER NOT NULL) WITHOUT ROWID`,
		`INSERT INTO cache VALUES ('demo/current_weather', '{"city":"Paris"}', 'ok', '{"t":1}', '', 'upstream', 1700000000000)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	code, out, errs := run(t, ctx, "store", "status", "--store", path)
	if code != 0 || !strings.Contains(out, "cache      version 0  toolenv store migrate brings it to 3") {
		t.Fatalf("status of an old store: %d %q %s", code, out, errs)
	}
	code, out, errs = run(t, ctx, "store", "migrate", "--store", path)
	if code != 0 || !strings.Contains(out, "cache      version 3  migrated from 0") {
		t.Fatalf("migrate: %d %q %s", code, out, errs)
	}
	code, out, _ = run(t, ctx, "store", "migrate", "--store", path)
	if code != 0 || !strings.Contains(out, "cache      version 3  up to date") {
		t.Fatalf("migrate again: %d %q", code, out)
	}
	code, out, _ = run(t, ctx, "cache", "export", "--store", path)
	if code != 0 || !strings.Contains(out, `"response":{"t":1}`) {
		t.Fatalf("the old entry after migration: %d %s", code, out)
	}
	// A newer toolenv moved the cache on.
	db, _ = sql.Open("sqlite", path)
	if _, err := db.Exec(`UPDATE toolenv_schema SET version = 4 WHERE component = 'cache'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, _, errs = run(t, ctx, "serve", "--store", path, "--addr", freeAddr(t))
	if code == 0 || !strings.Contains(errs, "schema version 4 but this toolenv knows only up to 3") || !strings.Contains(errs, "upgrade this toolenv") {
		t.Fatalf("serve on a newer store: exit %d, %s", code, errs)
	}
	code, out, _ = run(t, ctx, "store", "status", "--store", path)
	if code != 0 || !strings.Contains(out, "newer than this toolenv (3): upgrade it") {
		t.Fatalf("status of a newer store: %d %q", code, out)
	}
}

// replica is a "toolenv serve" child process.
type replica struct {
	base   string
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	mu     *sync.Mutex
}

// startReplica runs the test binary as toolenv serve (see TestMain) and
// waits until it answers.
func startReplica(t testing.TB, args ...string) *replica {
	t.Helper()
	return startReplicaUnder(t, nil, args...)
}

// startReplicaUnder is startReplica run through a wrapper command (such
// as prlimit with its options), when wrapper is not empty. The replica
// listens on a port the kernel picks and is ready once it says so (the
// address is read from that line): a port chosen beforehand could be
// taken by another test's server before the child binds it, and a
// readiness poll would then take that server for this replica.
func startReplicaUnder(t testing.TB, wrapper []string, args ...string) *replica {
	t.Helper()
	argv := append(append(slices.Clone(wrapper), os.Args[0], "serve", "--addr", "127.0.0.1:0", "--log-level", "warn"), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "TOOLENV_RUN_MAIN=1")
	r := &replica{cmd: cmd, stderr: &bytes.Buffer{}, mu: &sync.Mutex{}}
	ready := newReadyWriter()
	cmd.Stderr = io.MultiWriter(lockedWriter{r.mu, r.stderr}, ready)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case <-ready.ready:
	case <-exited:
		t.Fatalf("replica exited at start: %s", r.log())
	case <-time.After(safetyNet): // it serves, or exits: the net only catches a hang
		t.Fatalf("replica did not come up: %s", r.log())
	}
	r.base = ready.base(t)
	return r
}

func (r *replica) log() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stderr.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// weather is a /virtual call of the demo's current_weather for city.
func weather(city string) map[string]any {
	return map[string]any{"category": "Weather", "tool_name": "Skylark Weather", "api_name": "current_weather",
		"tool_input": fmt.Sprintf(`{"city": %q}`, city), "strip": "", "toolbench_key": ""}
}

// callVirtual posts a /virtual call without failing the test (for
// goroutines): the answer's response, and the call's status and source.
func callVirtual(base string, body map[string]any) (response, status, source string, err error) {
	raw, _ := json.Marshal(body)
	resp, err := http.Post(base+"/virtual", "application/json", bytes.NewReader(raw))
	if err != nil {
		return "", "", "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var ans map[string]any
	if err := json.Unmarshal(b, &ans); err != nil {
		return "", "", "", fmt.Errorf("answer %s: %w", b, err)
	}
	response, _ = ans["response"].(string)
	return response, resp.Header.Get("X-Toolenv-Status"), resp.Header.Get("X-Toolenv-Source"), nil
}

// weatherReply is a simulator's answer for current_weather (its fields
// as documented, so that it passes the simulator's checks and is cached),
// numbered n.
func weatherReply(n int) string {
	return fmt.Sprintf(`{"error": "", "response": "{\"city\": \"Paris\", \"temperature_c\": %d, \"conditions\": \"sunny\"}"}`, n)
}

// uniqueModel answers every simulator request with a body no other
// request gets, after delay.
func uniqueModel(delay time.Duration) llmtest.Func {
	return func(n int, _ *llm.Request) llmtest.Reply {
		return llmtest.Reply{Delay: delay, Content: weatherReply(n)}
	}
}

// TestReplicasAnswerEachMissOnce (issue 11 item 2): three toolenv serve
// processes on one PostgreSQL answer many concurrent calls of new keys;
// the simulator is asked once per distinct key and every caller of a key
// gets the same answer, whichever replica it reached.
func TestReplicasAnswerEachMissOnce(t *testing.T) {
	t.Parallel()        // waits on the simulator's delay
	dsn := pgtest.DB(t) // a fresh database on the server the tests share
	sim := llmtest.New(uniqueModel(300 * time.Millisecond))
	defer sim.Close()
	var replicas []*replica
	for range 3 {
		// the store's fail-fast bound is not what this measures: a safety net
		replicas = append(replicas, startReplica(t, "--store", dsn, "--store-timeout", safetyNet.String(), "--llm-url", sim.URL(), "--llm-model", "m"))
	}
	const keys, callers = 6, 12
	type answer struct{ key, response, status string }
	answers := make(chan answer, keys*callers)
	var wg sync.WaitGroup
	for k := range keys {
		for c := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, status, _, err := callVirtual(replicas[c%3].base, weather(fmt.Sprintf("city %d", k)))
				if err != nil {
					t.Error(err)
				}
				answers <- answer{fmt.Sprint(k), resp, status}
			}()
		}
	}
	wg.Wait()
	close(answers)
	byKey := map[string]map[string]int{}
	for a := range answers {
		if a.status != "ok" {
			t.Fatalf("a call failed: %+v", a)
		}
		if byKey[a.key] == nil {
			byKey[a.key] = map[string]int{}
		}
		byKey[a.key][a.response]++
	}
	for k, m := range byKey {
		if len(m) != 1 {
			t.Errorf("key %s got %d different answers across replicas: %v", k, len(m), m)
		}
	}
	if n := len(sim.Requests()); n != keys {
		t.Fatalf("the simulator was asked %d times for %d distinct misses on 3 replicas, want %d", n, keys, keys)
	}
	// Later calls are cache hits on every replica.
	for _, r := range replicas {
		if _, _, source, err := callVirtual(r.base, weather("city 0")); err != nil || source != "cache" {
			t.Fatalf("replica %s: source %q, err %v", r.base, source, err)
		}
	}
}

// TestReplicaKilledHoldingAClaim (issue 11, faults): a replica killed with
// kill -9 while it answers a miss (its simulator request in flight) holds
// the key's claim; another replica waiting on the same key takes over once
// the claim's lease runs out, and answers.
func TestReplicaKilledHoldingAClaim(t *testing.T) {
	t.Parallel()        // waits on the claim's lease
	dsn := pgtest.DB(t) // a fresh database on the server the tests share
	sim := llmtest.New(func(n int, _ *llm.Request) llmtest.Reply {
		if n == 0 {
			return llmtest.Reply{Delay: 10 * time.Minute, Content: weatherReply(-1)}
		}
		return llmtest.Reply{Content: weatherReply(n)}
	})
	defer sim.Close()
	args := []string{"--store", dsn, "--store-timeout", safetyNet.String(), "--llm-url", sim.URL(), "--llm-model", "m", "--claim-lease", "2s"}
	a := startReplica(t, args...)
	b := startReplica(t, append(args, "--log-level", "debug")...) // logs its wait on a's claim
	go callVirtual(a.base, weather("Oslo"))                       // fails when a dies
	waitFor(t, "replica a's simulator request", func() bool { return len(sim.Requests()) == 1 })
	type result struct {
		response, status, source string
		err                      error
	}
	done := make(chan result)
	go func() {
		r, st, src, err := callVirtual(b.base, weather("Oslo"))
		done <- result{r, st, src, err}
	}()
	waitFor(t, "replica b waiting on a's claim", func() bool {
		return strings.Contains(b.log(), "waiting for another replica answering the same call")
	})
	if len(sim.Requests()) != 1 {
		t.Fatalf("replica b asked the simulator while a held the claim: %d requests", len(sim.Requests()))
	}
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil || r.status != "ok" || r.source != "simulator" || !strings.Contains(r.response, `"temperature_c": 1,`) {
			t.Fatalf("after takeover: %+v\n%s", r, b.log())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("replica b never took the claim over: %s", b.log())
	}
	if n := len(sim.Requests()); n != 2 {
		t.Fatalf("simulator requests %d, want 2 (the killed replica's and the takeover's)", n)
	}
}

// waitFor polls cond until it holds; the deadline (safetyNet) only
// catches a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(safetyNet)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPostgresDownAtStart: serve and the cache commands refuse a
// PostgreSQL that is not there, saying what to check.
func TestPostgresDownAtStart(t *testing.T) {
	ctx := context.Background()
	dsn := "postgres://toolenv:s3cret@" + freeAddr(t) + "/toolenv?sslmode=disable"
	for _, args := range [][]string{
		{"serve", "--store", dsn, "--addr", freeAddr(t)},
		{"cache", "stats", "--store", dsn},
		{"store", "migrate", "--store", dsn},
	} {
		code, _, errs := run(t, ctx, args...)
		if code == 0 || !strings.Contains(errs, "cannot reach PostgreSQL") && !strings.Contains(errs, "connect") {
			t.Errorf("%v: exit %d, %s", args[:2], code, errs)
		}
		if strings.Contains(errs, "s3cret") {
			t.Errorf("%v: the password reached the message: %s", args[:2], errs)
		}
	}
}

// TestPostgresLostMidRun (issue 11, faults): with the database gone, a
// call that needs it fails fast with a clear status and the simulator is
// not paid; when the database returns the replica recovers, and every
// answer given before is still there.
func TestPostgresLostMidRun(t *testing.T) {
	t.Parallel() // waits on its own PostgreSQL server
	pg := pgtest.Start(t)
	dsn := pg.NewDatabase(t)
	sim := llmtest.New(uniqueModel(0))
	defer sim.Close()
	r := startReplica(t, "--store", dsn, "--llm-url", sim.URL(), "--llm-model", "m")
	before, status, _, err := callVirtual(r.base, weather("Rome"))
	if err != nil || status != "ok" {
		t.Fatalf("before: %v %s", err, status)
	}
	pg.Stop()
	resp, status, _, err := callVirtual(r.base, weather("Lima"))
	if err != nil || status != "unavailable" || !strings.Contains(resp, "cache store cannot be reached") {
		t.Fatalf("with the database gone: status %q, %q, %v", status, resp, err)
	}
	if n := len(sim.Requests()); n != 1 {
		t.Fatalf("the simulator was asked %d times; a call that cannot be kept must not pay it", n)
	}
	if err := pg.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the replica to recover", func() bool {
		_, status, _, err := callVirtual(r.base, weather("Lima"))
		return err == nil && status == "ok"
	})
	// A replica that never saw the answers reads them from the database.
	fresh := startReplica(t, "--store", dsn, "--llm-url", sim.URL(), "--llm-model", "m")
	again, status, source, err := callVirtual(fresh.base, weather("Rome"))
	if err != nil || status != "ok" || source != "cache" || again != before {
		t.Fatalf("the answer given before the outage: %q from %s (%v), want %q from the cache", again, source, err, before)
	}
}

// TestTwoProcessesShareOneSQLiteStore (issue 13 item 6): two serve
// processes on one SQLite file answer many concurrent identical new calls
// with one answer, though each may have asked the simulator.
func TestTwoProcessesShareOneSQLiteStore(t *testing.T) {
	sim := llmtest.New(uniqueModel(200 * time.Millisecond))
	defer sim.Close()
	path := filepath.Join(t.TempDir(), "shared.db")
	ps := []*replica{
		startReplica(t, "--store", path, "--llm-url", sim.URL(), "--llm-model", "m"),
		startReplica(t, "--store", path, "--llm-url", sim.URL(), "--llm-model", "m"),
	}
	for round := range 3 {
		var mu sync.Mutex
		got := map[string]int{}
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, status, _, err := callVirtual(ps[i%2].base, weather(fmt.Sprintf("town %d", round)))
				mu.Lock()
				defer mu.Unlock()
				if err != nil || status != "ok" {
					t.Errorf("call: %v %s", err, status)
				}
				got[resp]++
			}()
		}
		wg.Wait()
		if len(got) != 1 {
			t.Fatalf("round %d: %d different answers to one call from two processes: %v", round, len(got), got)
		}
	}
}

// TestStoreFromEnvironment: TOOLENV_STORE names the store when --store is
// not given (a postgres:// DSN keeps its password off the command line).
func TestStoreFromEnvironment(t *testing.T) {
	dsn := pgtest.DB(t) // a fresh database on the server the tests share
	t.Setenv("TOOLENV_STORE", dsn)
	ctx := context.Background()
	code, out, errs := run(t, ctx, "store", "migrate")
	if code != 0 || !strings.Contains(out, "(postgres)") || !strings.Contains(out, "cache      version 3") {
		t.Fatalf("migrate through TOOLENV_STORE: %d %q %s", code, out, errs)
	}
	base, stop := serveInBackground(t)
	ans, _ := postVirtual(t, base, weather("Paris"))
	if ans["error"] != "" {
		t.Fatalf("serve through TOOLENV_STORE: %v", ans)
	}
	stop()
	code, out, _ = run(t, ctx, "cache", "stats", "--json")
	if code != 0 || !strings.Contains(out, `"kind": "postgres"`) {
		t.Fatalf("stats through TOOLENV_STORE: %d %s", code, out)
	}
}
