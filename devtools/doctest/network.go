package doctest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Network says where a file's servers listen: in a private network
// namespace of the file's own (where the fixed ports of the docs never
// meet another process), or on the host's loopback, one file at a time.
type Network struct {
	// Private is set when each file gets a network namespace.
	Private bool
	// userns is set when entering needs a user namespace too (not root).
	userns bool
	// lock is the host mode's lock file, shared by every process on the
	// machine that runs doc tests.
	lock string
	// ports are checked free before a file runs on the host.
	ports []string
}

// HostPorts are the addresses the docs' convention uses.
var HostPorts = []string{ModelAddr, "127.0.0.1:8080", "127.0.0.1:8088"}

// DetectNetwork returns a private network when unshare and ip can make
// one here (root, or unprivileged user namespaces), else the host's.
// mode "host" or "private" forces one ("" detects).
func DetectNetwork(mode string) (*Network, error) {
	host := &Network{lock: filepath.Join(os.TempDir(), "toolenv-doctest.lock"), ports: HostPorts}
	if mode == "host" {
		return host, nil
	}
	for _, userns := range []bool{false, true} {
		if !userns && os.Geteuid() != 0 {
			continue
		}
		n := &Network{Private: true, userns: userns}
		args := append(n.unshare(), "sh", "-c", "ip link set lo up")
		if err := exec.Command(args[0], args[1:]...).Run(); err == nil {
			return n, nil
		}
	}
	if mode == "private" {
		return nil, fmt.Errorf("no private network here: `unshare --net` and `ip link set lo up` need root or unprivileged user namespaces")
	}
	return host, nil
}

func (n *Network) unshare() []string {
	if n.userns {
		return []string{"unshare", "--user", "--map-root-user", "--net"}
	}
	return []string{"unshare", "--net"}
}

// namespace is one file's network.
type namespace struct {
	net    *Network
	holder *exec.Cmd
	enter  []string
	lockf  *os.File
}

func (n *Network) open(ctx context.Context) (*namespace, error) {
	if n == nil {
		n = &Network{lock: filepath.Join(os.TempDir(), "toolenv-doctest.lock"), ports: HostPorts}
	}
	ns := &namespace{net: n}
	if !n.Private {
		f, err := os.OpenFile(n.lock, os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, err
		}
		ns.lockf = f
		for _, a := range n.ports {
			l, err := net.Listen("tcp", a)
			if err != nil {
				ns.close(nil)
				return nil, fmt.Errorf("%s is in use by another process: the docs' commands need it (stop that process, or run where a private network namespace can be made)", a)
			}
			l.Close()
		}
		return ns, nil
	}
	args := append(n.unshare(), "sh", "-c", "ip link set lo up && echo up && exec sleep 2147483647")
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("make a private network: %w", err)
	}
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("make a private network: the holder ended: %w", err)
	}
	ns.holder = cmd
	ns.enter = []string{"nsenter", "--target", strconv.Itoa(cmd.Process.Pid), "--net"}
	if n.userns {
		ns.enter = append(ns.enter, "--user", "--preserve-credentials")
	}
	return ns, nil
}

// wrap returns a command line that runs args in the file's network.
func (ns *namespace) wrap(args []string) []string {
	if ns == nil || ns.holder == nil {
		return args
	}
	return append(append(append([]string(nil), ns.enter...), "--"), args...)
}

// close ends the file's network: the namespace's holder, or on the host
// the wait until addrs are free and the lock.
func (ns *namespace) close(addrs []string) error {
	if ns.holder != nil {
		ns.holder.Process.Kill()
		ns.holder.Wait()
		return nil
	}
	defer func() {
		if ns.lockf != nil {
			syscall.Flock(int(ns.lockf.Fd()), syscall.LOCK_UN)
			ns.lockf.Close()
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for _, a := range addrs {
		for {
			c, err := net.DialTimeout("tcp", a, time.Second)
			if err != nil {
				break
			}
			c.Close()
			if time.Now().After(deadline) {
				return fmt.Errorf("%s still answers after every process the file started was stopped", a)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}
