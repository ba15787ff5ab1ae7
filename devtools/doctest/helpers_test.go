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
