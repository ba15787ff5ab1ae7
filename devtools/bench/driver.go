package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/toolenv/toolenv/devtools/loadgen"
)

// The load generators Options.LoadGenerator names.
const (
	// GeneratorAuto is wrk when it is on the PATH, else the Go one.
	GeneratorAuto = "auto"
	// GeneratorWrk is wrk (Debian's package; scripts/install-wrk.sh),
	// driven with a Lua script cycling through the recorded calls: a
	// client written in C, so that the client saturates after the
	// servers do and narrows no gap.
	GeneratorWrk = "wrk"
	// GeneratorGo is devtools/loadgen, in this process.
	GeneratorGo = "go"
)

// driver sends one target's load: an unmeasured warm-up, then a
// measured round, whose result and the client's own CPU time it returns.
type driver interface {
	name() string
	// effective is the duration a round of d lasts with this driver.
	effective(d time.Duration) time.Duration
	warmup(ctx context.Context, base string, d time.Duration) error
	measure(ctx context.Context, base string, d time.Duration) (*loadgen.Result, time.Duration, error)
}

// newDriver returns the load generator o asks for, sending bodies to
// /virtual (wrk's script and the bodies live in dir).
func newDriver(o *Options, bodies [][]byte, dir string) (driver, error) {
	gen := o.LoadGenerator
	if gen == "" || gen == GeneratorAuto {
		gen = GeneratorGo
		if _, err := exec.LookPath("wrk"); err == nil {
			gen = GeneratorWrk
		}
	}
	switch gen {
	case GeneratorGo:
		return &goDriver{bodies: bodies, connections: o.Connections}, nil
	case GeneratorWrk:
		exe, err := exec.LookPath("wrk")
		if err != nil {
			return nil, fmt.Errorf("bench: --load-generator wrk: %w (install it with scripts/install-wrk.sh, or use --load-generator go)", err)
		}
		return newWrk(exe, bodies, dir, o.Connections, o.Threads)
	}
	return nil, fmt.Errorf("bench: unknown load generator %q (want auto, wrk or go)", gen)
}

// goDriver is devtools/loadgen in this process; its CPU time is this
// process's (nothing else runs here during a round).
type goDriver struct {
	bodies      [][]byte
	connections int
}

func (g *goDriver) name() string { return "go (devtools/loadgen, in the bench process)" }

func (g *goDriver) effective(d time.Duration) time.Duration { return d }

func (g *goDriver) requests(base string) []loadgen.Request {
	hdr := http.Header{"Content-Type": {"application/json"}}
	reqs := make([]loadgen.Request, len(g.bodies))
	for i, b := range g.bodies {
		reqs[i] = loadgen.Request{Method: http.MethodPost, URL: base + "/virtual", Body: b, Header: hdr}
	}
	return reqs
}

func (g *goDriver) warmup(ctx context.Context, base string, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	_, err := loadgen.Run(ctx, g.requests(base), loadgen.Options{Connections: g.connections, Duration: d})
	return err
}

func (g *goDriver) measure(ctx context.Context, base string, d time.Duration) (*loadgen.Result, time.Duration, error) {
	reqs := g.requests(base)
	before := selfCPU()
	res, err := loadgen.Run(ctx, reqs, loadgen.Options{Connections: g.connections, Duration: d})
	return res, selfCPU() - before, err
}

// selfCPU is this process's user + system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// wrkDriver runs wrk as a child process per round.
type wrkDriver struct {
	exe, script          string
	connections, threads int
	version              string
}

// wrkScript cycles through the recorded calls, one body a line of the
// file BODIES (JSON has no raw newline), each thread from its own
// offset.
const wrkScript = `local reqs = {}
local n = 0
init = function(args)
  for line in io.lines(%q) do
    reqs[#reqs + 1] = wrk.format("POST", "/virtual", {["Content-Type"] = "application/json"}, line)
  end
  n = math.random(#reqs)
end
request = function()
  n = n %% #reqs + 1
  return reqs[n]
end
`

func newWrk(exe string, bodies [][]byte, dir string, connections, threads int) (*wrkDriver, error) {
	var b bytes.Buffer
	for _, body := range bodies {
		if bytes.ContainsAny(body, "\r\n") {
			return nil, fmt.Errorf("bench: a request body holds a line break, which wrk's script cannot take")
		}
		b.Write(body)
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, "bodies.txt")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "bench.lua")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(wrkScript, path)), 0o644); err != nil {
		return nil, err
	}
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	w := &wrkDriver{exe: exe, script: script, connections: connections, threads: min(threads, connections)}
	if out, _ := exec.Command(exe, "--version").CombinedOutput(); len(out) > 0 {
		w.version = strings.Fields(string(out))[1]
	}
	return w, nil
}

func (w *wrkDriver) name() string {
	return fmt.Sprintf("wrk %s (%d threads, a child process)", w.version, w.threads)
}

func (w *wrkDriver) effective(d time.Duration) time.Duration {
	return time.Duration(seconds(d)) * time.Second
}

// seconds is d as wrk takes it: whole seconds, at least one.
func seconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

func (w *wrkDriver) run(ctx context.Context, base string, d time.Duration) (string, time.Duration, error) {
	cmd := exec.CommandContext(ctx, w.exe, "-t", strconv.Itoa(w.threads), "-c", strconv.Itoa(w.connections),
		"-d", strconv.Itoa(seconds(d))+"s", "--latency", "-s", w.script, base+"/virtual")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", 0, fmt.Errorf("bench: wrk: %w: %s", err, out.String())
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return out.String(), cpu, nil
}

func (w *wrkDriver) warmup(ctx context.Context, base string, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	_, _, err := w.run(ctx, base, d)
	return err
}

func (w *wrkDriver) measure(ctx context.Context, base string, d time.Duration) (*loadgen.Result, time.Duration, error) {
	out, cpu, err := w.run(ctx, base, d)
	if err != nil {
		return nil, 0, err
	}
	res, err := parseWrk(out)
	if err != nil {
		return nil, 0, err
	}
	res.Connections = w.connections
	return res, cpu, nil
}

// parseWrk reads wrk's report (with --latency): the requests and the
// time they took, the latency percentiles and maximum, non-2xx answers
// and socket errors.
func parseWrk(out string) (*loadgen.Result, error) {
	res := &loadgen.Result{}
	found := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 5 && f[0] == "Latency" && f[1] != "Distribution":
			res.Max, _ = parseWrkDuration(f[3])
		case len(f) == 2 && strings.HasSuffix(f[0], "%"):
			d, err := parseWrkDuration(f[1])
			if err != nil {
				return nil, fmt.Errorf("bench: wrk's latency %q: %w", sc.Text(), err)
			}
			switch f[0] {
			case "50%":
				res.P50 = d
			case "90%":
				res.P90 = d
			case "99%":
				res.P99 = d
			}
		case len(f) >= 5 && f[1] == "requests" && f[2] == "in":
			n, err := strconv.Atoi(f[0])
			sec, err2 := parseWrkDuration(strings.TrimSuffix(f[3], ","))
			if err != nil || err2 != nil {
				return nil, fmt.Errorf("bench: wrk's count %q", sc.Text())
			}
			res.Requests, res.Elapsed, found = n, sec, true
		case len(f) >= 5 && f[0] == "Non-2xx":
			res.Non2xx, _ = strconv.Atoi(f[len(f)-1])
		case len(f) >= 3 && f[0] == "Socket" && f[1] == "errors:":
			// "Socket errors: connect 0, read 1, write 0, timeout 2"
			for i := 2; i+1 < len(f); i += 2 {
				n, _ := strconv.Atoi(strings.TrimSuffix(f[i+1], ","))
				res.Errors += n
			}
		}
	}
	if !found || res.Elapsed <= 0 {
		return nil, fmt.Errorf("bench: wrk printed no request count:\n%s", out)
	}
	res.RPS = float64(res.Requests) / res.Elapsed.Seconds()
	return res, nil
}

// parseWrkDuration reads wrk's durations: 812.00us, 1.23ms, 2.01s, 1.02m.
func parseWrkDuration(s string) (time.Duration, error) {
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"us", time.Microsecond}, {"ms", time.Millisecond}, {"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, err
			}
			if math.IsNaN(x) || x < 0 || x > float64(math.MaxInt64)/float64(u.unit) {
				return 0, fmt.Errorf("%q is not a duration", s)
			}
			return time.Duration(math.Round(x * float64(u.unit))), nil
		}
	}
	return 0, fmt.Errorf("no unit in %q", s)
}

// loadAverages reads /proc/loadavg's three figures (nil when it cannot).
func loadAverages() []float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return nil
	}
	out := make([]float64, 3)
	for i := range out {
		out[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return out
}
