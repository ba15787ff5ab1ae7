package bench

import (
	"os"
	"testing"
	"time"
)

// TestProcCPUCountsShortWork: a server's CPU in a short round is read in
// nanoseconds, not in the 10-ms clock ticks of /proc/PID/stat, which read
// zero for a process that ran between two ticks (on a busy machine, a
// bench round's bare handler did, and the report lost its CPU ratio).
func TestProcCPUCountsShortWork(t *testing.T) {
	self := &os.Process{Pid: os.Getpid()}
	if _, ok := schedCPU(self.Pid); !ok {
		t.Fatal("/proc/self/task/*/schedstat cannot be read: the bench's server CPU would be read in 10-ms ticks")
	}
	var seen []int64
	for i := 0; i < 100; i++ {
		before := procCPU(self)
		spin(200 * time.Microsecond)
		d := procCPU(self) - before
		if d < 0 {
			t.Fatalf("CPU went back by %d ns over a spin", -d)
		}
		if d > 0 && d%int64(10*time.Millisecond) != 0 {
			return // a reading finer than a clock tick
		}
		seen = append(seen, d)
	}
	t.Fatalf("over 100 spins CPU moved only by whole 10-ms clock ticks or not at all (%v ns): procCPU does not read the scheduler's nanoseconds", seen[:10])
}

// spin burns CPU until d of wall time has passed.
func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}
