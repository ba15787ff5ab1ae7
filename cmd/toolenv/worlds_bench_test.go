package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkWorldsServer measures, through toolenv serve over HTTP, a
// write call's server CPU against a read call's on the same table, in
// one session's world: PATCH of a member's phone (update_member) and
// GET of that member (get_member_by_key) of BIRD's student_club, in
// alternating phases of many calls, the server's CPU read from
// /proc/PID/stat around each phase (docs/benchmarks.md, "Worlds").
//
//	go test ./cmd/toolenv -run '^$' -bench WorldsServer -benchtime 1x
func BenchmarkWorldsServer(b *testing.B) {
	data := filepath.Join("..", "..", "..", "shared", "data", "bird")
	if _, err := os.Stat(data); err != nil {
		b.Skip("../shared/data/bird is absent")
	}
	out := filepath.Join(b.TempDir(), "out")
	if code, _, stderr := run(b, context.Background(), "build", "bird", "--data", data, "--out", out, "--db", "student_club", "--flavors", "rest", "--writes", "--log-level", "warn"); code != 0 {
		b.Fatalf("build: %s", stderr)
	}
	r := startReplica(b, "--collection", filepath.Join(out, "rest"))
	resp, err := http.Post(r.base+"/sessions", "application/json", nil)
	if err != nil {
		b.Fatal(err)
	}
	session := resp.Header.Get("X-Toolenv-Session")
	resp.Body.Close()
	const path = "/v1/bird/student_club/member/rec1x5zBFIqoOuPW8"
	do := func(method string, body []byte) {
		req, _ := http.NewRequest(method, r.base+path, bytes.NewReader(body))
		req.Header.Set("X-Toolenv-Session", session)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
	}
	// Short phases, many rounds: what the machine's other load and the
	// garbage collector's timing add falls on both kinds alike; the
	// figure is the median of the rounds' ratios.
	const perPhase, rounds = 400, 15
	var wcpu, rcpu time.Duration
	var ratios []float64
	for round := 0; round < rounds; round++ {
		c0 := procCPU(b, r.cmd.Process.Pid)
		for i := 0; i < perPhase; i++ {
			do(http.MethodPatch, []byte(fmt.Sprintf(`{"phone": "555-%05d"}`, i%100)))
		}
		c1 := procCPU(b, r.cmd.Process.Pid)
		for i := 0; i < perPhase; i++ {
			do(http.MethodGet, nil)
		}
		c2 := procCPU(b, r.cmd.Process.Pid)
		wcpu += c1 - c0
		rcpu += c2 - c1
		if c2 > c1 {
			ratios = append(ratios, float64(c1-c0)/float64(c2-c1))
		}
	}
	sort.Float64s(ratios)
	n := float64(perPhase * rounds)
	b.ReportMetric(float64(wcpu.Microseconds())/n, "write-server-cpu-us")
	b.ReportMetric(float64(rcpu.Microseconds())/n, "read-server-cpu-us")
	b.ReportMetric(ratios[len(ratios)/2], "median-write/read")
	b.ReportMetric(float64(wcpu)/float64(rcpu), "write/read")
}

// procCPU is a process's user + system CPU time (/proc/PID/stat).
func procCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ 100
}
