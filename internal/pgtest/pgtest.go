// Package pgtest starts real PostgreSQL servers for tests: Debian's
// binaries (scripts/install-postgres.sh installs them), a fresh cluster
// (a copy of one initdb made once per machine) in a temporary folder,
// the server as the test process's own child on a random loopback port,
// stopped and removed at the end.
//
// Where PostgreSQL is not installed the tests that need it skip with a
// message saying how to install it; with CI set in the environment they
// fail instead. Run as root (CI containers), the server runs as the
// "postgres" user Debian's package creates (or "nobody"), because initdb
// and postgres refuse to run as root.
//
// Start gives a test a server of its own (to stop, restart or kill it);
// DB gives it a fresh database on one server the test binary shares,
// which the package's TestMain must stop through Main.
package pgtest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a PostgreSQL server a test started.
type Server struct {
	bin  string // folder holding initdb and postgres
	dir  string // the temporary folder: data/, the socket, the log
	port int
	cred *syscall.Credential // nil unless running as root

	mu  sync.Mutex
	cmd *exec.Cmd
	// exited is closed when the running server process ends.
	exited chan struct{}
	dbs    atomic.Int64
}

// BinDir returns the folder holding PostgreSQL's initdb and postgres:
// $TOOLENV_PG_BIN, else the newest /usr/lib/postgresql/*/bin (Debian's
// layout), else the folder of initdb on PATH.
func BinDir() (string, error) {
	if d := os.Getenv("TOOLENV_PG_BIN"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err != nil {
			return "", fmt.Errorf("TOOLENV_PG_BIN=%s holds no initdb: %w", d, err)
		}
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return cmp.Compare(version(b), version(a)) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb, no initdb on PATH): run scripts/install-postgres.sh, or set TOOLENV_PG_BIN to the folder holding initdb and postgres")
}

func version(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

// Available reports whether PostgreSQL can be started here, and if not,
// why.
func Available() error {
	_, err := BinDir()
	return err
}

// require skips (or, under CI, fails) t when PostgreSQL is missing.
func require(t testing.TB) string {
	t.Helper()
	bin, err := BinDir()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v (CI is set, so this fails instead of skipping)", err)
		}
		t.Skip(err)
	}
	return bin
}

// Start starts a server of t's own, stopped and removed when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := require(t)
	s, err := newServer(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// newServer makes a cluster and starts its server.
func newServer(bin string) (*Server, error) {
	s := &Server{bin: bin}
	var err error
	if s.cred, err = credential(); err != nil {
		return nil, err
	}
	if s.dir, err = os.MkdirTemp("", "toolenv-pgtest-"); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(s.dir)
		}
	}()
	// The server's user must reach its folder (t.TempDir() folders are
	// private to the test's user).
	if err := os.Chmod(s.dir, 0o755); err != nil {
		return nil, err
	}
	if s.cred != nil {
		if err := os.Chown(s.dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return nil, err
		}
	}
	if err := s.copyCluster(); err != nil {
		return nil, err
	}
	var lastErr error
	for range 5 {
		if s.port, lastErr = freePort(); lastErr != nil {
			continue
		}
		if lastErr = s.Restart(); lastErr == nil {
			ok = true
			return s, nil
		}
	}
	return nil, lastErr
}

// initdbArgs are initdb's arguments but the data folder.
var initdbArgs = []string{"-U", "toolenv", "--auth=trust", "--encoding=UTF8", "--no-locale", "--no-sync"}

// copyCluster copies the machine's fresh cluster to the server's data
// folder; a kept cluster found incomplete (files of the system's
// temporary folder are removed by age), or gone while it was copied, is
// made again.
func (s *Server) copyCluster() error {
	data := filepath.Join(s.dir, "data")
	for attempt := 0; ; attempt++ {
		cluster, err := s.cluster()
		if err != nil {
			return err
		}
		files, err := copyTree(cluster, data, s.cred)
		want, _ := os.ReadFile(filepath.Join(filepath.Dir(cluster), "files"))
		if err == nil && strconv.Itoa(files) == string(want) {
			return nil
		}
		if attempt == 1 {
			return fmt.Errorf("copying the cluster initdb made in %s: %d files copied, %q made (%v)", cluster, files, want, err)
		}
		os.RemoveAll(filepath.Dir(cluster))
		if err := os.RemoveAll(data); err != nil {
			return err
		}
	}
}

// cluster returns the data folder of a fresh cluster made by initdb,
// made once for every test process of the machine and copied by each
// server (initdb costs two seconds of CPU, a copy of its 40 MB a tenth:
// a test suite starts a score of servers). It lives in the system's
// temporary folder under a name that says which PostgreSQL, which
// arguments and which user made it; it is made in a folder of its own
// and renamed into place when complete, so that no process sees one
// half made (two processes making one at once: the first rename wins,
// the other uses it). Servers never write to it: each runs on its copy.
func (s *Server) cluster() (string, error) {
	initdb := filepath.Join(s.bin, "initdb")
	st, err := os.Stat(initdb)
	if err != nil {
		return "", err
	}
	uid := os.Geteuid()
	if s.cred != nil {
		uid = int(s.cred.Uid)
	}
	key := sha256.Sum256([]byte(fmt.Sprintf("%s|%d|%d|%s|%d", initdb, st.Size(), st.ModTime().UnixNano(), strings.Join(initdbArgs, " "), uid)))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("toolenv-pgtest-cluster-%x", key[:8]))
	data := filepath.Join(dir, "data")
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err == nil {
		return data, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "toolenv-pgtest-initdb-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // gone by then when renamed
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	made := filepath.Join(tmp, "data")
	if err := os.Mkdir(made, 0o700); err != nil {
		return "", err
	}
	if s.cred != nil {
		if err := os.Chown(made, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return "", err
		}
	}
	cmd := s.command("initdb", append([]string{"-D", made}, initdbArgs...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("initdb: %w\n%s", err, out)
	}
	n := 0
	if err := filepath.WalkDir(made, func(_ string, _ fs.DirEntry, err error) error { n++; return err }); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, "files"), []byte(strconv.Itoa(n)), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(data, "PG_VERSION")); serr == nil {
			return data, nil // another process's, made at the same time
		}
		return "", fmt.Errorf("keeping the cluster initdb made: %w", err)
	}
	return data, nil
}

// copyTree copies the folder from to the new folder to, modes kept,
// everything owned by cred's user when cred is set, and returns how many
// files and folders it copied.
func copyTree(from, to string, cred *syscall.Credential) (int, error) {
	n := 0
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		n++
		dst := filepath.Join(to, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.Mkdir(dst, info.Mode().Perm()); err != nil {
				return err
			}
		case info.Mode().Type() == fs.ModeSymlink:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, dst); err != nil {
				return err
			}
			if cred != nil {
				return os.Lchown(dst, int(cred.Uid), int(cred.Gid))
			}
			return nil
		default:
			if err := copyFile(path, dst, info.Mode().Perm()); err != nil {
				return err
			}
		}
		if cred != nil {
			return os.Chown(dst, int(cred.Uid), int(cred.Gid))
		}
		return nil
	})
	return n, err
}

func copyFile(from, to string, mode fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// credential is who the server runs as: nil (the test's own user) unless
// the test runs as root, which initdb refuses.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if uid == 0 {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return nil, errors.New("running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as (initdb refuses root): create one, or run the tests as another user")
}

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	// The server dies with the test process, even when that is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGKILL}
	return cmd
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Port is the server's loopback port.
func (s *Server) Port() int { return s.port }

// DSN is the URL of database db on the server ("postgres" is always
// there).
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://toolenv@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// NewDatabase creates an empty database and returns its DSN.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d", s.dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return s.DSN(name)
}

// Restart starts the server again after Stop or Kill (on the same port
// and data), waiting until it accepts connections.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("pgtest: the server is running")
	}
	logf, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := s.command("postgres", "-D", filepath.Join(s.dir, "data"), "-p", strconv.Itoa(s.port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.cmd, s.exited = cmd, exited
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.DSN("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		select {
		case <-exited:
			s.cmd = nil
			return fmt.Errorf("postgres exited at start: %s", s.logTail())
		default:
		}
		if time.Now().After(deadline) {
			s.stopLocked(syscall.SIGKILL)
			return fmt.Errorf("postgres did not accept connections within 60s: %v\n%s", err, s.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(bytes.TrimSpace(b))
}

// Stop shuts the server down (fast shutdown: open sessions are ended,
// committed data is kept) and waits for it to exit.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked(syscall.SIGINT)
}

// Kill kills the server with SIGKILL (its data survives; the next
// Restart recovers it).
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked(syscall.SIGKILL)
}

func (s *Server) stopLocked(sig syscall.Signal) {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
	if sig == syscall.SIGKILL {
		// The postmaster's children notice it is gone and exit; its
		// shared memory goes with the last of them. Wait for the pid file
		// check of the next start not to trip over them.
		time.Sleep(200 * time.Millisecond)
	}
}

// Close stops the server and removes its folder.
func (s *Server) Close() {
	s.Stop()
	os.RemoveAll(s.dir)
}

var shared struct {
	mu     sync.Mutex
	srv    *Server
	err    error
	inMain bool
}

// DB returns the DSN of a fresh, empty database on the server the test
// binary shares (started on first use). The package's TestMain must run
// its tests through Main, which stops the server at the end.
func DB(t testing.TB) string {
	t.Helper()
	bin := require(t)
	shared.mu.Lock()
	if !shared.inMain {
		shared.mu.Unlock()
		t.Fatal("pgtest.DB needs the package's TestMain to call pgtest.Main(m) (it stops the shared server); or use pgtest.Start")
	}
	if shared.srv == nil && shared.err == nil {
		shared.srv, shared.err = newServer(bin)
	}
	srv, err := shared.srv, shared.err
	shared.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	return srv.NewDatabase(t)
}

// Main runs the package's tests and stops the shared server of DB. Call
// it from TestMain: func TestMain(m *testing.M) { pgtest.Main(m) }.
func Main(m *testing.M, after ...func()) {
	shared.mu.Lock()
	shared.inMain = true
	shared.mu.Unlock()
	code := m.Run()
	for _, f := range after {
		f()
	}
	shared.mu.Lock()
	if shared.srv != nil {
		shared.srv.Close()
	}
	shared.mu.Unlock()
	os.Exit(code)
}

// IsCI reports whether the tests run under CI (CI set in the
// environment), where a missing dependency fails rather than skips.
func IsCI() bool { return strings.TrimSpace(os.Getenv("CI")) != "" }
