package mcpsource

import (
	"bytes"
	"io"
	"testing"
)

// countLines is the reference count: lines whose first headBytes bytes
// hold the notification mark.
func countLines(data []byte) uint64 {
	var n uint64
	lines := bytes.Split(data, []byte("\n"))
	for _, l := range lines[:len(lines)-1] { // the last has no newline yet
		if len(l) > headBytes {
			l = l[:headBytes]
		}
		if bytes.Contains(l, notificationMark) {
			n++
		}
	}
	return n
}

// chunked reads data in chunks of the sizes sizes gives, in turn.
type chunked struct {
	data  []byte
	sizes []byte
	i     int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = int(c.sizes[c.i%len(c.sizes)])%len(p) + 1
		c.i++
	}
	n = min(n, len(c.data), len(p))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func (c *chunked) Close() error { return nil }

// FuzzNotesCounting: however a stream of lines is cut into reads, the
// notifications counted are the lines whose head holds the mark.
func FuzzNotesCounting(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`+"\n"+`{"jsonrpc":"2.0","id":1,"result":{}}`+"\n"), []byte{3, 7})
	f.Add([]byte("data: {\"method\":\"notifications/message\",\"jsonrpc\":\"2.0\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\\\"method\\\":\\\"notifications/x\\\"\"}]}}\n"), []byte{1})
	f.Add([]byte("\n\n\n"), []byte{})
	f.Fuzz(func(t *testing.T, data, sizes []byte) {
		var n notes
		r := n.counting(&chunked{data: data, sizes: sizes})
		if _, err := io.Copy(io.Discard, r); err != nil {
			t.Fatal(err)
		}
		if got, want := n.arrived.Load(), countLines(data); got != want {
			t.Fatalf("counted %d notifications, want %d", got, want)
		}
	})
}
