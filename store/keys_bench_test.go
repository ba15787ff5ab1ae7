package store

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"
)

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
