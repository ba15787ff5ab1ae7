//go:build unix

package foldercache

import (
	"context"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock of path, waiting while another
// process (or goroutine) holds it; the kernel drops the lock of a
// process that dies. It returns ctx's error when ctx
// ends first.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return nil, err
		}
		return func() { f.Close() }, nil // closing drops the lock
	case <-ctx.Done():
		go func() {
			<-done
			f.Close()
		}()
		return nil, ctx.Err()
	}
}
