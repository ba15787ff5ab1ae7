// Package logtest holds what tests use to read the logs and output of
// code running in goroutines of its own.
package logtest

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent writers: a log sink (or
// an io.Writer for output) that a test reads while goroutines write to
// it. The zero value is empty and ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
