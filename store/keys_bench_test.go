package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	toolenv "github.com/toolenv/toolenv"
	"golang.org/x/sys/unix"
)

// largeArgs returns the canonical text of about size bytes of
// arguments shaped as server's BenchmarkRequestShapesPerKB shapes them
// (many small keys, objects 64 deep, long strings with escapes and
// multi-byte characters, long arrays of numbers), or "stb": the real
// arguments of StableToolBench's example predictions and the real
// queries of its solvable test sets as string arguments (nil when the
// shared data folder is absent).
func largeArgs(tb testing.TB, shape string, size int) string {
	var b bytes.Buffer
	b.WriteString(`{"q": "x"`)
	if shape == "stb" {
		vals := stbValues(tb)
		if vals == nil {
			return ""
		}
		for i := 0; b.Len() < size && i < len(vals); i++ { // each once: no repeats to find
			v, _ := json.Marshal(vals[i])
			fmt.Fprintf(&b, `, "c%06d": %s`, i, v)
		}
	}
	for i := 0; b.Len() < size && shape != "stb"; i++ {
		switch shape {
		case "keys":
			fmt.Fprintf(&b, `, "k%07d": 1`, i)
		case "deep":
			fmt.Fprintf(&b, `, "d%05d": `, i)
			for j := range 64 {
				fmt.Fprintf(&b, `{"n%d": `, j%10)
			}
			b.WriteString(`[1, "x", true]`)
			b.WriteString(strings.Repeat("}", 64))
		case "strings":
			fmt.Fprintf(&b, `, "s%03d": "`, i)
			for j := 0; j < 64<<10/32; j++ {
				b.WriteString(`lorem ipsum é日本 \"quoted\"\n\t`)
			}
			b.WriteByte('"')
		case "arrays":
			fmt.Fprintf(&b, `, "a%03d": [`, i)
			for j := range 16 << 10 {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%d.%d", j, j%7)
			}
			b.WriteByte(']')
		}
	}
	b.WriteByte('}')
	m, err := toolenv.ParseJSONObject(b.Bytes())
	if err != nil {
		tb.Fatal(err)
	}
	c, err := toolenv.Canonical(m)
	if err != nil {
		tb.Fatal(err)
	}
	return string(c)
}

// stbValues are real StableToolBench argument values: the arguments of
// the example predictions' tool calls, then each solvable query as a
// {"query": …} object, in the files' order (distinct texts, so that a
// compressor cannot just find the previous copy).
func stbValues(tb testing.TB) []any {
	dir := filepath.Join("..", "..", "shared", "data", "stabletoolbench")
	if _, err := os.Stat(dir); err != nil {
		tb.Logf("skipping the StableToolBench shape: %s is absent", dir)
		return nil
	}
	var out []any
	preds, _ := filepath.Glob(filepath.Join(dir, "data_example", "model_predictions_converted", "*", "*.json"))
	for _, f := range preds {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var walk func(any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					if s, ok := x.(string); ok && k == "arguments" {
						var a map[string]any
						if json.Unmarshal([]byte(s), &a) == nil {
							out = append(out, a)
						}
						continue
					}
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			tb.Fatal(err)
		}
		walk(v)
	}
	qs, _ := filepath.Glob(filepath.Join(dir, "solvable_queries", "test_instruction", "*.json"))
	for _, f := range qs {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var list []struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			tb.Fatal(err)
		}
		for _, q := range list {
			out = append(out, map[string]any{"query": q.Query})
		}
	}
	return out
}

func threadCPU() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

// BenchmarkLargeKeyCodec measures the compressors considered for the
// full text of a digest key, on about 1 MB of canonical arguments of
// each shape: CPU per KB to compress and to decompress, and the ratio.
//
//	go test ./store -run '^$' -bench LargeKeyCodec -benchtime 20x
func BenchmarkLargeKeyCodec(b *testing.B) {
	zfast, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
	zdec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	codecs := []struct {
		name string
		enc  func([]byte) []byte
		dec  func([]byte) ([]byte, error)
	}{
		{"s2", func(p []byte) []byte { return s2.Encode(nil, p) }, func(z []byte) ([]byte, error) { return s2.Decode(nil, z) }},
		{"s2better", func(p []byte) []byte { return s2.EncodeBetter(nil, p) }, func(z []byte) ([]byte, error) { return s2.Decode(nil, z) }},
		{"zstdfastest", func(p []byte) []byte { return zfast.EncodeAll(p, nil) }, func(z []byte) ([]byte, error) { return zdec.DecodeAll(z, nil) }},
	}
	for _, shape := range []string{"keys", "deep", "strings", "arrays", "stb"} {
		text := []byte(largeArgs(b, shape, 1<<20))
		if len(text) < 10 {
			continue
		}
		kb := float64(len(text)) / 1024
		for _, c := range codecs {
			b.Run(shape+"/"+c.name, func(b *testing.B) {
				runtime.LockOSThread() // the thread's CPU clock measures this goroutine
				defer runtime.UnlockOSThread()
				var enc, dec time.Duration
				var z []byte
				for b.Loop() {
					t0 := threadCPU()
					z = c.enc(text)
					t1 := threadCPU()
					out, err := c.dec(z)
					t2 := threadCPU()
					if err != nil || !bytes.Equal(out, text) {
						b.Fatalf("round trip: %v", err)
					}
					enc, dec = enc+t1-t0, dec+t2-t1
				}
				n := float64(b.N)
				b.ReportMetric(float64(enc.Nanoseconds())/1e3/n/kb, "enc-cpu-µs/KB")
				b.ReportMetric(float64(dec.Nanoseconds())/1e3/n/kb, "dec-cpu-µs/KB")
				b.ReportMetric(float64(len(text))/float64(len(z)), "ratio")
			})
		}
	}
}
