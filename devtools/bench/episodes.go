package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/episode/episodetest"
	"github.com/toolenv/toolenv/episode/openenv"
	"github.com/toolenv/toolenv/internal/buildinfo"
)

// EpisodesOptions configure toolenv bench episodes.
type EpisodesOptions struct {
	// Collection is a built collection folder with tasks (its
	// tasks.jsonl); the oracle plays its tasks.
	Collection string `json:"collection" flag:"collection" path:"file" help:"a collection folder with tasks.jsonl (e.g. out/bird/slot); the oracle plays its tasks"`
	// Concurrency lists the numbers of episodes open at once to measure.
	Concurrency []string `json:"concurrency" flag:"concurrency,comma" default:"1,100,10000" help:"numbers of episodes open at once to measure, comma-separated"`
	// Workers bounds the load generator's connections; each worker
	// takes turns among its episodes (0 means 64).
	Workers int `json:"workers" flag:"workers" default:"64" help:"the load generator's connections; each takes turns among its share of the open episodes"`
	// Executable is the toolenv program the server runs as; "" means
	// this program.
	Executable string `json:"-"`
	// Log receives progress lines; nil discards them.
	Log io.Writer `json:"-"`
	// Command is the command line, recorded in the report.
	Command []string `json:"-"`
}

// EpisodesReport is what toolenv bench episodes measured.
type EpisodesReport struct {
	Date       string          `json:"date"`
	Machine    string          `json:"machine"`
	CPUs       int             `json:"cpus"`
	Load       float64         `json:"load_average"`
	Toolenv    string          `json:"toolenv"`
	Command    []string        `json:"command,omitempty"`
	Collection string          `json:"collection"`
	Levels     []EpisodesLevel `json:"levels"`
}

// EpisodesLevel is one concurrency level: latencies of resets (to the
// first observation) and steps, the server's CPU per request and its
// memory per open episode, and the load generator's own CPU.
type EpisodesLevel struct {
	Open           int     `json:"open_episodes"`
	Workers        int     `json:"workers"`
	Resets         int     `json:"resets"`
	Steps          int     `json:"steps"`
	ResetP50       float64 `json:"reset_p50_ms"`
	ResetP99       float64 `json:"reset_p99_ms"`
	StepP50        float64 `json:"step_p50_ms"`
	StepP99        float64 `json:"step_p99_ms"`
	StepsPerSecond float64 `json:"steps_per_second"`
	// ServerCPUPerReset and ServerCPUPerStep are the server's CPU time
	// per request, in µs.
	ServerCPUPerReset float64 `json:"server_cpu_per_reset_us"`
	ServerCPUPerStep  float64 `json:"server_cpu_per_step_us"`
	// ClientCPUShare is the load generator's CPU time over the server's:
	// well below 1, it is not the bottleneck.
	ClientCPUShare float64 `json:"client_cpu_over_server_cpu"`
	// KiBPerEpisode is the server's resident memory growth per open
	// episode, idle after its reset.
	KiBPerEpisode float64 `json:"kib_per_open_episode"`
	Rewarded      int     `json:"episodes_at_reward_1"`
	Load          float64 `json:"load_average"`
}

// Episodes runs toolenv bench episodes: for each concurrency level it
// starts toolenv serve on the collection, opens that many episodes at
// once (resets), then plays every one to its end with the oracle, the
// load generator's workers taking turns among them over HTTP (POST
// /openenv/reset and /step).
func Episodes(ctx context.Context, o EpisodesOptions) (*EpisodesReport, error) {
	if o.Collection == "" {
		return nil, fmt.Errorf("bench episodes: give --collection, a collection folder with tasks (toolenv build bird writes them)")
	}
	if o.Workers <= 0 {
		o.Workers = 64
	}
	if len(o.Concurrency) == 0 {
		o.Concurrency = []string{"1", "100", "10000"}
	}
	var levels []int
	for _, c := range o.Concurrency {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bench episodes: --concurrency %q: want positive numbers of episodes, e.g. 1,100,10000", c)
		}
		levels = append(levels, n)
	}
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	coll, err := toolenv.ReadCollection(o.Collection)
	if err != nil {
		return nil, err
	}
	tasks, _, err := toolenv.ReadTasks(filepath.Join(o.Collection, toolenv.TasksFile))
	if err != nil || len(tasks) == 0 {
		return nil, fmt.Errorf("bench episodes: %s has no tasks (%v)", o.Collection, err)
	}
	host, _ := os.Hostname()
	rep := &EpisodesReport{Date: time.Now().UTC().Format(time.RFC3339), Machine: host, CPUs: runtime.NumCPU(), Load: loadAverage(),
		Toolenv: buildinfo.Version(), Command: o.Command, Collection: coll.Name}
	for _, n := range levels {
		fmt.Fprintf(logw, "bench episodes: %d open episodes...\n", n)
		lv, err := episodesLevel(ctx, &o, coll, tasks, n)
		if err != nil {
			return nil, err
		}
		rep.Levels = append(rep.Levels, *lv)
	}
	return rep, nil
}

func episodesLevel(ctx context.Context, o *EpisodesOptions, coll *toolenv.Collection, tasks []*toolenv.Task, n int) (*EpisodesLevel, error) {
	bo := &Options{Executable: o.Executable}
	// The store is a file, as toolenv serve's default: every ended
	// episode is written there, and an in-memory database would count
	// them in the server's resident memory.
	dir, err := os.MkdirTemp("", "toolenv-bench-episodes-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	base, proc, stop, err := bo.start(ctx, []string{"serve", "--collection", o.Collection, "--store", filepath.Join(dir, "store.db"), "--addr", "127.0.0.1:0",
		"--max-episodes", strconv.Itoa(n + 64), "--max-episodes-per-client", "-1", "--max-conns", "-1", "--episode-max-steps", "1000"}, "serving ")
	if err != nil {
		return nil, err
	}
	defer stop()
	workers := min(o.Workers, n)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers}}
	url := strings.TrimRight(base, "/") + openenv.Prefix
	lv := &EpisodesLevel{Open: n, Workers: workers}
	// Warm up: one episode played to its end.
	if _, err := playOne(ctx, openenv.NewClient(url, openenv.ClientOptions{HTTPClient: hc}), coll, tasks[0]); err != nil {
		return nil, fmt.Errorf("bench episodes: warm-up: %w", err)
	}
	waves := (minEpisodes + n - 1) / n
	var (
		resets, steps     []time.Duration
		resetCPU, stepCPU int64
		elapsed           time.Duration
	)
	self0, server0 := int64(selfCPU()), procCPU(proc)
	for wave := 0; wave < waves; wave++ {
		rss0, _ := procMemMiB(proc)
		cpu0 := procCPU(proc)
		fmt.Fprintf(o.logw(), "bench episodes: wave %d of %d: %d resets...\n", wave+1, waves, n)
		eps, lat, err := resetWave(ctx, url, hc, coll, tasks, n, workers, wave)
		if err != nil {
			return nil, err
		}
		cpu1 := procCPU(proc)
		if wave == 0 {
			rss1, _ := procMemMiB(proc)
			lv.KiBPerEpisode = (rss1 - rss0) * 1024 / float64(n)
		}
		resets = append(resets, lat...)
		resetCPU += cpu1 - cpu0
		t0 := time.Now()
		fmt.Fprintf(o.logw(), "bench episodes: wave %d: %d episodes open, playing them...\n", wave+1, n)
		lat, rewarded, err := stepWave(ctx, url, hc, coll, eps)
		if err != nil {
			return nil, err
		}
		elapsed += time.Since(t0)
		stepCPU += procCPU(proc) - cpu1
		steps = append(steps, lat...)
		lv.Rewarded += rewarded
		if err := closeWave(ctx, url, hc, eps); err != nil {
			return nil, err
		}
	}
	lv.Resets, lv.Steps = len(resets), len(steps)
	lv.ResetP50, lv.ResetP99 = pct(resets, 0.5), pct(resets, 0.99)
	lv.StepP50, lv.StepP99 = pct(steps, 0.5), pct(steps, 0.99)
	lv.StepsPerSecond = float64(len(steps)) / elapsed.Seconds()
	lv.ServerCPUPerReset = float64(resetCPU) / float64(len(resets)) / 1e3
	lv.ServerCPUPerStep = float64(stepCPU) / float64(len(steps)) / 1e3
	if server := procCPU(proc) - server0; server > 0 {
		lv.ClientCPUShare = float64(int64(selfCPU())-self0) / float64(server)
	}
	lv.Load = loadAverage()
	return lv, nil
}

func (o *EpisodesOptions) logw() io.Writer {
	if o.Log == nil {
		return io.Discard
	}
	return o.Log
}

// minEpisodes is how many episodes a level plays at least: a level of
// fewer open episodes plays several waves of them, one after the other.
const minEpisodes = 200

// live is one open episode of the load generator.
type live struct {
	id    string
	or    *episodetest.Oracle
	done  bool
	steps int
}

// stepRetry takes a step with a request id, sending it again when the
// connection failed under it (a keep-alive connection the server closed
// as the request left): the server answers a resent request id with the
// step's first answer, never taking it twice.
func stepRetry(ctx context.Context, c *openenv.Client, id string, action map[string]any, rid string) (*openenv.StepResult, error) {
	for try := 1; ; try++ {
		r, err := c.StepHTTPWith(ctx, id, action, openenv.StepOptions{RequestID: rid})
		var se *openenv.ServerError
		if err == nil || errors.As(err, &se) || try == 3 || ctx.Err() != nil {
			return r, err
		}
	}
}

// resetWave opens n episodes, the workers sharing them; eps[w] are
// worker w's.
func resetWave(ctx context.Context, url string, hc *http.Client, coll *toolenv.Collection, tasks []*toolenv.Task, n, workers, wave int) ([][]*live, []time.Duration, error) {
	eps := make([][]*live, workers)
	lat := make([][]time.Duration, workers)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := openenv.NewClient(url, openenv.ClientOptions{HTTPClient: hc})
			for i := w; i < n; i += workers {
				task := tasks[(wave*n+i)%len(tasks)]
				t0 := time.Now()
				id, err := c.ResetEpisodeID(ctx, map[string]any{"collection": coll.Name, "task_id": task.ID})
				if err != nil {
					errs <- err
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
				eps[w] = append(eps[w], &live{id: id, or: episodetest.NewOracle(coll, task)})
			}
		}(w)
	}
	wg.Wait()
	select {
	case err := <-errs:
		return nil, nil, fmt.Errorf("bench episodes: reset: %w", err)
	default:
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	return eps, all, nil
}

// stepWave plays every episode to its end: each worker takes turns among
// its episodes, one step each.
func stepWave(ctx context.Context, url string, hc *http.Client, coll *toolenv.Collection, eps [][]*live) ([]time.Duration, int, error) {
	workers := len(eps)
	lat := make([][]time.Duration, workers)
	rewarded := make([]int, workers)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := openenv.NewClient(url, openenv.ClientOptions{HTTPClient: hc})
			left := len(eps[w])
			for left > 0 {
				for _, e := range eps[w] {
					if e.done {
						continue
					}
					action := map[string]any{"type": "final_answer"}
					g, ok, err := e.or.Next()
					if err != nil {
						errs <- err
						return
					}
					if ok {
						action = map[string]any{"type": "call_tool", "tool_name": g.Name, "arguments": g.Args, "label": g.Label}
					}
					t0 := time.Now()
					e.steps++
					r, err := stepRetry(ctx, c, e.id, action, fmt.Sprintf("%s-%d", e.id, e.steps))
					if err != nil {
						errs <- err
						return
					}
					lat[w] = append(lat[w], time.Since(t0))
					if ok {
						if res, _ := r.Observation["result"].(map[string]any); res != nil {
							body, _ := json.Marshal(res["data"])
							e.or.Observe(g.Label, body)
						}
					}
					if r.Done {
						e.done = true
						left--
						if r.Reward != nil && *r.Reward == 1 {
							rewarded[w]++
						}
					}
				}
			}
		}(w)
	}
	wg.Wait()
	select {
	case err := <-errs:
		return nil, 0, fmt.Errorf("bench episodes: step: %w", err)
	default:
	}
	var all []time.Duration
	n := 0
	for w := range lat {
		all = append(all, lat[w]...)
		n += rewarded[w]
	}
	return all, n, nil
}

// closeWave closes the wave's episodes (not measured), each worker its
// own. They are done, so their slots are free already: a close of a done
// episode is answered and changes nothing.
func closeWave(ctx context.Context, url string, hc *http.Client, eps [][]*live) error {
	errs := make(chan error, len(eps))
	var wg sync.WaitGroup
	for _, list := range eps {
		wg.Add(1)
		go func(list []*live) {
			defer wg.Done()
			c := openenv.NewClient(url, openenv.ClientOptions{HTTPClient: hc})
			for _, e := range list {
				if err := c.CloseHTTP(ctx, e.id); err != nil {
					errs <- fmt.Errorf("bench episodes: close: %w", err)
					return
				}
			}
		}(list)
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func playOne(ctx context.Context, c *openenv.Client, coll *toolenv.Collection, task *toolenv.Task) (float64, error) {
	r, err := c.ResetHTTP(ctx, map[string]any{"collection": coll.Name, "task_id": task.ID})
	if err != nil {
		return 0, err
	}
	id, _ := r.Metadata["episode_id"].(string)
	or := episodetest.NewOracle(coll, task)
	for {
		g, ok, err := or.Next()
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		r, err := c.StepHTTP(ctx, id, map[string]any{"type": "call_tool", "tool_name": g.Name, "arguments": g.Args, "label": g.Label})
		if err != nil {
			return 0, err
		}
		if res, _ := r.Observation["result"].(map[string]any); res != nil {
			body, _ := json.Marshal(res["data"])
			or.Observe(g.Label, body)
		}
	}
	r, err = c.StepHTTP(ctx, id, map[string]any{"type": "final_answer"})
	if err != nil || r.Reward == nil {
		return 0, err
	}
	return *r.Reward, c.CloseHTTP(ctx, id)
}

// pct is the q-quantile of ds in milliseconds.
func pct(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q * float64(len(s)))
	if i >= len(s) {
		i = len(s) - 1
	}
	return float64(s[i]) / 1e6
}

// PrintEpisodes writes rep as a Markdown table.
func PrintEpisodes(w io.Writer, rep *EpisodesReport) {
	fmt.Fprintf(w, "toolenv bench episodes — %s, %s (%d CPUs), load %.1f, toolenv %s, collection %s\n\n", rep.Date, rep.Machine, rep.CPUs, rep.Load, rep.Toolenv, rep.Collection)
	fmt.Fprintln(w, "| open episodes | workers | reset p50 / p99 (ms) | step p50 / p99 (ms) | steps/s | server CPU per reset / step (µs) | load generator CPU / server CPU | KiB per open episode | reward 1 |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, l := range rep.Levels {
		fmt.Fprintf(w, "| %d | %d | %.2f / %.2f | %.2f / %.2f | %.0f | %.0f / %.0f | %.2f | %.1f | %d/%d |\n", l.Open, l.Workers, l.ResetP50, l.ResetP99, l.StepP50, l.StepP99,
			l.StepsPerSecond, l.ServerCPUPerReset, l.ServerCPUPerStep, l.ClientCPUShare, l.KiBPerEpisode, l.Rewarded, l.Resets)
	}
}
