package episode_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
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
// verified task through both interfaces: OpenEnv's WebSocket protocol
// and MCP sessions.
func TestOracleBIRD(t *testing.T) {
	data := shareddata.Require(t, "bird")
	ctx := context.Background()
	out := t.TempDir()
	if _, err := nl2api.Build(ctx, nl2api.Options{Data: data, Out: out, Flavors: []string{"slot", "sel", "rest"}}); err != nil {
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
	for _, version := range []struct {
		name  string
		colls []string
	}{{"v1", v1}, {"v2 (drifted)", v2}} {
		env, err := environment.Open(ctx, &environment.Config{Collections: version.colls, Drift: environment.DriftConfig{Mode: drift.ModeStrict}})
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
			failed := playAll(t, srv.URL, coll, tasks)
			if failed > 0 {
				t.Errorf("%s %s: %d of %d tasks below reward 1", version.name, coll.Name, failed, 2*len(tasks))
			}
			t.Logf("%s %s: %d tasks at reward 1 over OpenEnv's WebSocket and over MCP", version.name, coll.Name, len(tasks))
		}
		srv.Close()
		eps.Close()
		env.Close()
	}
}

// playAll plays every task over both interfaces, on both cores, and
// returns how many episodes fell short.
func playAll(t *testing.T, base string, coll *toolenv.Collection, tasks []*toolenv.Task) int {
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
			for i := w; i < len(tasks); i += workers {
				_, err := episodetest.PlayOpenEnv(ctx, c, coll, tasks[i], nil)
				report(err)
				_, err = episodetest.PlayMCP(ctx, base+"/openenv/mcp", "", coll, tasks[i])
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
