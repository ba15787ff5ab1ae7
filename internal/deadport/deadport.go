// Package deadport gives tests a loopback address nothing answers on and
// nothing else can take while the test runs.
//
// The usual way to get an address nobody listens on — listen on port 0,
// note the port, close — leaves the port free for the kernel to give to
// the next server that asks, in this process or in another package's
// test binary running beside it: the "dead" endpoint then answers, and a
// test's requests meant to fail land on someone else's fake server (a
// test model whose replies are counted, say), failing both tests in ways
// that depend on timing. Addr instead keeps the port bound, without
// listening, until the test ends: connections to it are refused at once,
// and no other socket can bind it meanwhile.
package deadport

import "testing"

// Addr returns "127.0.0.1:port" of a TCP port bound for the rest of t and
// not listening: every connection to it is refused.
func Addr(t testing.TB) string {
	t.Helper()
	addr, release, err := bind()
	if err != nil {
		t.Fatalf("deadport: %v", err)
	}
	t.Cleanup(release)
	return addr
}

// Bind is Addr for code without a testing.TB (an Example): the caller
// calls release when it no longer needs the port dead.
func Bind() (addr string, release func(), err error) {
	return bind()
}

// URL returns "http://" + Addr(t) + path.
func URL(t testing.TB, path string) string {
	t.Helper()
	return "http://" + Addr(t) + path
}
