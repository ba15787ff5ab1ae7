//go:build unix

package deadport

import (
	"fmt"
	"syscall"
)

// bind binds a TCP socket to a free loopback port without listening
// (and without SO_REUSEADDR, so that no listener can share the port).
func bind() (string, func(), error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return "", nil, fmt.Errorf("socket: %w", err)
	}
	syscall.CloseOnExec(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return "", nil, fmt.Errorf("bind: %w", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return "", nil, fmt.Errorf("getsockname: %w", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		syscall.Close(fd)
		return "", nil, fmt.Errorf("getsockname: %T", sa)
	}
	return fmt.Sprintf("127.0.0.1:%d", in4.Port), func() { syscall.Close(fd) }, nil
}
