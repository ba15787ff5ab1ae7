package sqltools_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/nl2api"
	"github.com/toolenv/toolenv/nl2api/nl2apitest"
)

// TestRenderMemoAnswersAlike: on generated adversarial corpora (keyword
// and protocol-field names, Unicode, NULLs, big tables), every call of
// every task's gold sequence answers byte for byte alike with the render
// memo and without it, the first time and again from memory in another
// session.
func TestRenderMemoAnswersAlike(t *testing.T) {
	ctx := context.Background()
	for _, seed := range []uint64{3, 29} {
		eachFlavor(t, seed, 12000, func(flavor string, c *toolenv.Collection, tasks []*toolenv.Task) {
			memo, err := sqltools.Open(ctx, c, sqltools.Options{})
			if err != nil {
				t.Fatal(err)
			}
			plain, err := sqltools.Open(ctx, c, sqltools.Options{RenderCacheBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			for _, task := range tasks {
				want := run(t, plain, c, task, "p-"+task.ID)
				for round := 0; round < 2; round++ {
					got := run(t, memo, c, task, fmt.Sprintf("m%d-%s", round, task.ID))
					if len(got) != len(want) {
						t.Fatalf("%s %s: %d results, want %d", flavor, task.ID, len(got), len(want))
					}
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("%s %s call %d (round %d):\n got %s\nwant %s", flavor, task.ID, i, round, got[i], want[i])
						}
					}
				}
				calls += len(want)
			}
			if calls == 0 {
				t.Fatalf("%s: no call compared", flavor)
			}
			// The second round's sessions were answered from the memo.
			if st := memo.Stats(); st.MemoHits < int64(calls)/2 || plain.Stats().MemoHits != 0 {
				t.Fatalf("%s: memo hits %d misses %d over %d calls in two rounds", flavor, st.MemoHits, st.MemoMisses, calls)
			}
			t.Logf("seed %d %s: %d calls of %d tasks answer alike", seed, flavor, calls, len(tasks))
			memo.Close()
			plain.Close()
		})
	}
}

// run plays a task's initialisation and gold calls in session id and
// returns each result as status and body.
func run(t *testing.T, b *sqltools.Backend, c *toolenv.Collection, task *toolenv.Task, id string) []string {
	t.Helper()
	var out []string
	calls := append(agent.InitCalls(task), task.Gold...)
	for _, g := range calls {
		tool := c.Tool(g.Name)
		if tool == nil {
			t.Fatalf("%s: no tool %s", task.ID, g.Name)
		}
		res := b.Invoke(context.Background(), &toolenv.Call{Tool: tool, Collection: c, Args: agent.WithLabel(tool, g.Args, g.Label), Session: id})
		out = append(out, string(res.Status)+" "+string(res.Body)+" "+res.Error)
	}
	return out
}

// TestRowCountFromShortPreview: a table result whose preview holds fewer
// rows than it may takes its row count from the preview instead of a
// COUNT query; on generated adversarial corpora (NULLs, duplicates,
// limits, groupings, big tables) every result's row_count equals the one
// a backend showing a single preview row counts with COUNT(*).
func TestRowCountFromShortPreview(t *testing.T) {
	ctx := context.Background()
	for _, seed := range []uint64{5, 41} {
		eachFlavor(t, seed, 3000, func(flavor string, c *toolenv.Collection, tasks []*toolenv.Task) {
			five, err := sqltools.Open(ctx, c, sqltools.Options{RenderCacheBytes: -1})
			if err != nil {
				t.Fatal(err)
			}
			one, err := sqltools.Open(ctx, c, sqltools.Options{RenderCacheBytes: -1, PreviewRows: 1})
			if err != nil {
				t.Fatal(err)
			}
			short := 0
			for _, task := range tasks {
				got, want := run(t, five, c, task, "f-"+task.ID), run(t, one, c, task, "o-"+task.ID)
				for i := range want {
					g, w := rowCount(got[i]), rowCount(want[i])
					if g != w {
						t.Fatalf("%s %s call %d: row_count %q, counted %q\n%s", flavor, task.ID, i, g, w, got[i])
					}
					if n, err := strconv.Atoi(g); err == nil && n > 1 && n < 5 {
						short++
					}
				}
			}
			if short == 0 {
				t.Fatalf("%s: no table result of 2 to 4 rows: the short-preview path went untested", flavor)
			}
			t.Logf("seed %d %s: %d results of 2 to 4 rows counted from their preview", seed, flavor, short)
			five.Close()
			one.Close()
		})
	}
}

// eachFlavor builds the SLOT and SEL collections of a generated
// adversarial corpus (seed, with a table of bigRows rows) and calls f
// with each collection and its tasks.
func eachFlavor(t *testing.T, seed uint64, bigRows int, f func(flavor string, c *toolenv.Collection, tasks []*toolenv.Task)) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	data, out := filepath.Join(dir, "data"), filepath.Join(dir, "out")
	if _, err := nl2apitest.Generate(data, nl2apitest.Options{Seed: seed, BigRows: bigRows}); err != nil {
		t.Fatal(err)
	}
	if _, err := nl2api.Build(ctx, nl2api.Options{Data: data, Out: out, Flavors: []string{"slot", "sel"}, Seed: int64(seed), Workers: 1}); err != nil {
		t.Fatal(err)
	}
	for _, flavor := range []string{"slot", "sel"} {
		c, err := toolenv.ReadCollection(filepath.Join(out, flavor))
		if err != nil {
			t.Fatal(err)
		}
		tasks, _, err := toolenv.ReadTasks(filepath.Join(out, flavor, toolenv.TasksFile))
		if err != nil {
			t.Fatal(err)
		}
		f(flavor, c, tasks)
	}
}

// rowCount is the row_count a result body shows, or "".
func rowCount(result string) string {
	m := rowCountRE.FindStringSubmatch(result)
	if m == nil {
		return ""
	}
	return m[1]
}

var rowCountRE = regexp.MustCompile(`"row_count":\s*(\d+)`)
