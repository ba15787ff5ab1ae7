package doctest

import (
	"fmt"
	"net"
	"os"
	"testing"
	"time"
)

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fmtSscan(s string, args ...any) (int, error) { return fmt.Sscan(s, args...) }

func portFree(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil
	}
	c.Close()
	return fmt.Errorf("%s still answers", addr)
}

// besidePages marks a test that runs pages as parallel, so that it runs
// beside TestDocs's pages rather than after them (the package's wall
// time is then the longest of them, not their sum), when each page gets
// a network of its own. On the host's loopback pages take turns
// machine-wide anyway, and a test that finds the host's ports free after
// its page must not meet another test's page there: it stays sequential.
func besidePages(t *testing.T) {
	t.Helper()
	if network(t).Private {
		t.Parallel()
	}
}
