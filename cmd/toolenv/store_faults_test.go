package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolenv/toolenv/internal/pgtest"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
	"github.com/toolenv/toolenv/store"
)

// fleetAnswer is what a client of /virtual sees of one call.
type fleetAnswer struct {
	response, status, source string
	warnings                 []string
}

// callVirtualFull posts a /virtual call and returns the answer with its
// warnings (X-Toolenv-Warning), without failing the test.
func callVirtualFull(base string, body map[string]any) (fleetAnswer, error) {
	raw, _ := json.Marshal(body)
	resp, err := http.Post(base+"/virtual", "application/json", bytes.NewReader(raw))
	if err != nil {
		return fleetAnswer{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var ans map[string]any
	if err := json.Unmarshal(b, &ans); err != nil {
		return fleetAnswer{}, fmt.Errorf("answer %s: %w", b, err)
	}
	a := fleetAnswer{status: resp.Header.Get("X-Toolenv-Status"), source: resp.Header.Get("X-Toolenv-Source"), warnings: resp.Header.Values("X-Toolenv-Warning")}
	a.response, _ = ans["response"].(string)
	return a, nil
}

// storeWriteErrors reads toolenv_store_errors_total{op="write"} from a
// replica's /metrics (0 when the series is absent).
func storeWriteErrors(t *testing.T, base string) int {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	re := regexp.MustCompile(`^toolenv_store_errors_total\{op="write"\} (\d+)$`)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	return 0
}

func warned(a fleetAnswer) bool {
	for _, w := range a.warnings {
		if strings.Contains(w, "could not store this answer") {
			return true
		}
	}
	return false
}

// TestLoserOfAnInsertServesTheStoredAnswerOnPostgres (issue 13 item 6):
// two replicas on one PostgreSQL both answer the same new call, because
// the first one stalled (SIGSTOP) holding its claim and the second took
// the claim over after its lease and stored its answer; when the first
// resumes, its insert loses, and it serves the stored answer, not its
// own: both callers get one answer.
func TestLoserOfAnInsertServesTheStoredAnswerOnPostgres(t *testing.T) {
	t.Parallel()        // waits on the simulator's delay and the lease
	dsn := pgtest.DB(t) // a fresh database on the server the tests share
	sim := llmtest.New(func(n int, _ *llm.Request) llmtest.Reply {
		if n == 0 {
			return llmtest.Reply{Delay: 4 * time.Second, Content: weatherReply(100)}
		}
		return llmtest.Reply{Content: weatherReply(n)}
	})
	defer sim.Close()
	args := []string{"--store", dsn, "--store-timeout", safetyNet.String(), "--llm-url", sim.URL(), "--llm-model", "m", "--claim-lease", "1s"}
	a, b := startReplica(t, args...), startReplica(t, args...)
	type result struct {
		a   fleetAnswer
		err error
	}
	fromA := make(chan result, 1)
	go func() {
		ans, err := callVirtualFull(a.base, weather("Quito"))
		fromA <- result{ans, err}
	}()
	waitFor(t, "replica a's simulator request", func() bool { return len(sim.Requests()) == 1 })
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			a.cmd.Process.Signal(syscall.SIGCONT)
			resumed = true
		}
	}
	defer resume()
	ansB, err := callVirtualFull(b.base, weather("Quito"))
	if err != nil || ansB.status != "ok" || ansB.source != "simulator" || !strings.Contains(ansB.response, `"temperature_c": 1,`) {
		t.Fatalf("replica b after a stalled: %+v %v\n%s", ansB, err, b.log())
	}
	resume()
	var ra result
	select {
	case ra = <-fromA:
	case <-time.After(2 * time.Minute):
		t.Fatalf("replica a never answered: %s", a.log())
	}
	if len(sim.Requests()) != 2 {
		t.Fatalf("simulator requests %d, want 2 (both replicas answered)", len(sim.Requests()))
	}
	if ra.err != nil || ra.a.status != "ok" || ra.a.response != ansB.response {
		t.Fatalf("replica a served %+v (%v); want the stored answer %q, not its own", ra.a, ra.err, ansB.response)
	}
	for _, r := range []*replica{a, b} {
		again, err := callVirtualFull(r.base, weather("Quito"))
		if err != nil || again.source != "cache" || again.response != ansB.response {
			t.Fatalf("replica %s later: %+v %v", r.base, again, err)
		}
	}
}

// TestStoreWriteFailureReachesTheClient (issue 13 item 7): when the store
// cannot keep an answer, the client still gets the answer, with a
// warning saying it was not kept (X-Toolenv-Warning), and
// toolenv_store_errors_total{op="write"} counts it. Two real failures:
// PostgreSQL stopped while the simulator answers, and an SQLite store
// whose process may not grow its files (RLIMIT_FSIZE, as a full disk).
func TestStoreWriteFailureReachesTheClient(t *testing.T) {
	t.Parallel() // waits on the simulator's delay and the lease
	t.Run("postgres stopped mid-call", func(t *testing.T) {
		t.Parallel() // its own server and store; it waits on them
		pg := pgtest.Start(t)
		dsn := pg.NewDatabase(t)
		sim := llmtest.New(func(n int, _ *llm.Request) llmtest.Reply {
			if n == 0 {
				return llmtest.Reply{Delay: 3 * time.Second, Content: weatherReply(n)}
			}
			return llmtest.Reply{Content: weatherReply(n)}
		})
		defer sim.Close()
		r := startReplica(t, "--store", dsn, "--llm-url", sim.URL(), "--llm-model", "m", "--claim-lease", "2s")
		done := make(chan fleetAnswer, 1)
		go func() {
			ans, err := callVirtualFull(r.base, weather("Accra"))
			if err != nil {
				t.Error(err)
			}
			done <- ans
		}()
		waitFor(t, "the simulator request", func() bool { return len(sim.Requests()) == 1 })
		pg.Stop()
		ans := <-done
		if ans.status != "ok" || ans.source != "simulator" || !warned(ans) {
			t.Fatalf("the answer the store could not keep: %+v\n%s", ans, r.log())
		}
		if n := storeWriteErrors(t, r.base); n != 1 {
			t.Fatalf("toolenv_store_errors_total{op=\"write\"} = %d, want 1", n)
		}
		if err := pg.Restart(); err != nil {
			t.Fatal(err)
		}
		// Not kept: once the database is back, the call is answered anew
		// (after the unreleased claim's lease) and kept this time.
		var again fleetAnswer
		waitFor(t, "the replica to recover", func() bool {
			var err error
			again, err = callVirtualFull(r.base, weather("Accra"))
			return err == nil && again.status == "ok"
		})
		if again.source != "simulator" || warned(again) {
			t.Fatalf("after the database returned: %+v", again)
		}
		if kept, err := callVirtualFull(r.base, weather("Accra")); err != nil || kept.source != "cache" || kept.response != again.response {
			t.Fatalf("the answer given after recovery is not kept: %+v %v", kept, err)
		}
	})
	t.Run("sqlite disk full", func(t *testing.T) {
		t.Parallel() // its own store
		sim := llmtest.New(uniqueModel(0))
		defer sim.Close()
		path := filepath.Join(t.TempDir(), "full.db")
		// Each process's files may grow to 256 kB: the store fills up
		// after a few dozen answers.
		r := startReplicaUnder(t, []string{"prlimit", "--fsize=262144", "--"}, "--store", path, "--llm-url", sim.URL(), "--llm-model", "m")
		var kept []int
		var answers []fleetAnswer
		warnedCalls := 0
		for i := 0; i < 2000 && warnedCalls < 3; i++ {
			ans, err := callVirtualFull(r.base, weather(fmt.Sprintf("city %d", i)))
			if err != nil || ans.status != "ok" {
				t.Fatalf("call %d: %+v %v\n%s", i, ans, err, r.log())
			}
			answers = append(answers, ans)
			if warned(ans) {
				warnedCalls++
			} else {
				kept = append(kept, i)
			}
		}
		if warnedCalls == 0 || len(kept) == 0 {
			t.Fatalf("%d answers kept, %d warned: want both (the store should fill up)", len(kept), warnedCalls)
		}
		if n := storeWriteErrors(t, r.base); n != warnedCalls {
			t.Fatalf("toolenv_store_errors_total{op=\"write\"} = %d, want %d (the warned answers)", n, warnedCalls)
		}
		// What was served as kept is kept.
		for _, i := range []int{kept[0], kept[len(kept)-1]} {
			ans, err := callVirtualFull(r.base, weather(fmt.Sprintf("city %d", i)))
			if err != nil || ans.source != "cache" || ans.response != answers[i].response {
				t.Fatalf("call %d, served as kept: %+v %v", i, ans, err)
			}
		}
	})
}

// TestSchemaSkewOnPostgres (issue 11, faults): a replica refuses a
// PostgreSQL store that a newer toolenv migrated, saying what to do, as
// it does an SQLite file (TestStoreMigrateAndSkew).
func TestSchemaSkewOnPostgres(t *testing.T) {
	dsn := pgtest.DB(t) // a fresh database on the server the tests share
	ctx := t.Context()
	if code, out, errs := run(t, ctx, "store", "migrate", "--store", dsn); code != 0 {
		t.Fatalf("migrate: %d %s %s", code, out, errs)
	}
	st, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.SQL().Write.ExecContext(ctx, `UPDATE toolenv_schema SET version = version + 1 WHERE component = 'cache'`)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, ctx, "serve", "--store", dsn, "--addr", freeAddr(t))
	if code == 0 || !strings.Contains(errs, "but this toolenv knows only up to") || !strings.Contains(errs, "upgrade this toolenv") {
		t.Fatalf("serve on a store a newer toolenv migrated: exit %d, %s", code, errs)
	}
}
