package episode_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/drift"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/episode/episodetest"
	"github.com/toolenv/toolenv/episode/mcpepisode"
	"github.com/toolenv/toolenv/episode/openenv"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/nl2api"
)

// TestOracleBIRD: on the BIRD builds (SLOT, SEL, REST) and on their
// drifted versions (v2: renamed parameters, retyped values, moved
// endpoints, enforced strictly), the oracle reaches reward 1.0 on every
// verified task over MCP sessions, and on a seeded sample of them (a
// quarter of each collection's, at least sampleMin) over OpenEnv's
// WebSocket protocol.
//
// The reward is the episode's (package episode), the same whichever
// interface carries the calls; what an interface can get wrong for one
// task and not another is how it carries arguments and results, which
// the sample exercises on every collection and version. All tasks go
// through MCP, the cheaper of the two per episode (an OpenEnv reset
// carries every tool's schema: 40–230 KB a BIRD task). TOOLENV_ORACLE_SEED
// picks another sample (the seed is logged); TOOLENV_ORACLE_SEED=all
// plays every task over both.
func TestOracleBIRD(t *testing.T) {
	data := shareddata.Require(t, "bird")
	ctx := context.Background()
	out := t.TempDir()
	if _, err := nl2api.Build(ctx, nl2api.Options{Data: data, Out: out, Flavors: []string{"slot", "sel", "rest"}, ImageCache: imageCache}); err != nil {
		t.Fatal(err)
	}
	var v1, v2 []string
	for _, flavor := range []string{"slot", "sel", "rest"} {
		dir := filepath.Join(out, flavor)
		c, err := toolenv.ReadCollection(dir)
		if err != nil {
			t.Fatal(err)
		}
		tasks, _, err := toolenv.ReadTasks(filepath.Join(dir, toolenv.TasksFile))
		if err != nil {
			t.Fatal(err)
		}
		d, err := drift.Drift(drift.NewLineage(c), drift.Options{Seed: 7, Tasks: tasks})
		if err != nil {
			t.Fatal(err)
		}
		vdir := filepath.Join(out, flavor+"-v2")
		if err := drift.Write(vdir, d, drift.WriteOptions{BaseDir: dir}); err != nil {
			t.Fatal(err)
		}
		v1, v2 = append(v1, dir), append(v2, vdir)
	}
	seed, all := uint64(31), false
	switch v := os.Getenv("TOOLENV_ORACLE_SEED"); v {
	case "":
	case "all":
		all = true
	default:
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("TOOLENV_ORACLE_SEED=%q: want a seed (a decimal integer) or all", v)
		}
		seed = n
	}
	t.Logf("OpenEnv's sample: seed %d (TOOLENV_ORACLE_SEED), all tasks %t", seed, all)
	for _, version := range []struct {
		name  string
		colls []string
	}{{"v1", v1}, {"v2 (drifted)", v2}} {
		env, err := environment.Open(ctx, &environment.Config{Collections: version.colls, Drift: environment.DriftConfig{Mode: drift.ModeStrict}, ImageCache: imageCache.Dir})
		if err != nil {
			t.Fatal(err)
		}
		eps, err := episode.New(ctx, env, episode.Options{})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.Handle("/openenv/mcp", mcpepisode.NewHandler(eps, mcpepisode.Options{}))
		mux.Handle("/openenv/", http.StripPrefix("/openenv", openenv.NewHandler(eps, openenv.Options{})))
		srv := httptest.NewServer(mux)
		for _, coll := range env.Collections() {
			tasks := env.Tasks[coll.Name]
			if len(tasks) < 278 {
				t.Errorf("%s %s: %d tasks, fewer than the 278 verified", version.name, coll.Name, len(tasks))
			}
			if version.name != "v1" && !drift.IsDrifted(coll) {
				t.Errorf("%s is not drifted", coll.Name)
			}
			overWS := tasks
			if !all {
				overWS = sample(tasks, seed)
			}
			failed := playAll(t, srv.URL, coll, tasks, overWS)
			if failed > 0 {
				t.Errorf("%s %s: %d of %d episodes below reward 1", version.name, coll.Name, failed, len(tasks)+len(overWS))
			}
			t.Logf("%s %s: %d tasks at reward 1 over MCP, %d of them over OpenEnv's WebSocket", version.name, coll.Name, len(tasks), len(overWS))
		}
		srv.Close()
		eps.Close()
		env.Close()
	}
}

// sampleMin is the least number of tasks sample draws.
const sampleMin = 40

// sample is a quarter of tasks (at least sampleMin), drawn with seed,
// in their order.
func sample(tasks []*toolenv.Task, seed uint64) []*toolenv.Task {
	n := max(len(tasks)/4, min(sampleMin, len(tasks)))
	pick := rand.New(rand.NewPCG(seed, 0)).Perm(len(tasks))[:n]
	sort.Ints(pick)
	out := make([]*toolenv.Task, n)
	for i, k := range pick {
		out[i] = tasks[k]
	}
	return out
}

// playAll plays every task over MCP and those of overWS over OpenEnv's
// WebSocket, on both cores, and returns how many episodes fell short.
func playAll(t *testing.T, base string, coll *toolenv.Collection, tasks, overWS []*toolenv.Task) int {
	ctx := context.Background()
	var (
		mu     sync.Mutex
		failed int
		wg     sync.WaitGroup
	)
	report := func(err error) {
		if err == nil {
			return
		}
		mu.Lock()
		failed++
		if failed <= 5 {
			t.Errorf("%s: %v", coll.Name, err)
		}
		mu.Unlock()
	}
	const workers = 4
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := openenv.NewClient(base+"/openenv", openenv.ClientOptions{})
			defer c.Close()
			for i := w; i < len(overWS); i += workers {
				_, err := episodetest.PlayOpenEnv(ctx, c, coll, overWS[i], nil)
				report(err)
			}
			for i := w; i < len(tasks); i += workers {
				_, err := episodetest.PlayMCP(ctx, base+"/openenv/mcp", "", coll, tasks[i])
				report(wrap(err, "mcp"))
			}
		}(w)
	}
	wg.Wait()
	return failed
}

func wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
