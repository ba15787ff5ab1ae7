//go:build !unix

package deadport

import "net"

// bind falls back to a port listened on and closed: free again at once
// (another server may take it; on unix Addr keeps it bound).
func bind() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr, func() {}, nil
}
