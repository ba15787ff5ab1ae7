//go:build unix

package deadport

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// TestAddrRefusesAndCannotBeTaken: a connection to the address is
// refused, and a server asking for that port cannot have it while the
// test runs; the kernel never hands it out for port 0 either.
func TestAddrRefusesAndCannotBeTaken(t *testing.T) {
	addr := Addr(t)
	if _, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	if ln, err := net.Listen("tcp", addr); err == nil {
		ln.Close()
		t.Fatalf("a server could listen on %s", addr)
	}
	for i := 0; i < 2000; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		got := ln.Addr().String()
		ln.Close()
		if got == addr {
			t.Fatalf("port 0 was given %s, which Addr holds", addr)
		}
	}
}
