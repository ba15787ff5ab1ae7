package mcpsource

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/toolenv/toolenv/internal/redact"
)

// jsonrpcError is the error a server answers a request with.
type jsonrpcError = jsonrpc.Error

// stopGrace is how long a stdio server gets to exit after its input is
// closed, and again after SIGTERM, before it is killed.
const stopGrace = 2 * time.Second

// maxStderrLine bounds one logged line of a server's stderr.
const maxStderrLine = 4096

// process is a running stdio server: its own process group, stdin and
// stdout for JSON-RPC, stderr copied to the log line by line.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *lineLimiter
	exited chan struct{}
	err    error // the exit status, once exited is closed
	once   sync.Once
	tail   *tailBuffer // the last lines of stderr, for messages
}

// startProcess starts srv's command.
func startProcess(srv *Server, log *slog.Logger, maxLine int) (*process, error) {
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Dir = srv.Dir
	cmd.Env = childEnv(os.Environ(), srv.Env)
	setProcessGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("the command %q does not start: %w (is it installed and on PATH?)", srv.Command, err)
	}
	p := &process{cmd: cmd, stdin: stdin, stdout: &lineLimiter{r: stdout, limit: maxLine}, exited: make(chan struct{}), tail: &tailBuffer{max: 5}}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		copyStderr(stderr, log, p.tail)
	}()
	go func() {
		<-stderrDone
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// copyStderr logs each line the server writes to stderr, labelled (the
// logger carries the server's name), cut at maxStderrLine bytes.
func copyStderr(r io.Reader, log *slog.Logger, tail *tailBuffer) {
	br := bufio.NewReaderSize(r, maxStderrLine)
	for {
		line, isPrefix, err := br.ReadLine()
		if len(line) > 0 {
			text := redact.Text(string(bytes.ToValidUTF8(line, []byte("?"))))
			if isPrefix {
				text += " …(cut)"
				for isPrefix && err == nil { // skip the rest of the line
					_, isPrefix, err = br.ReadLine()
				}
			}
			tail.add(text)
			log.Info("mcp server stderr", "line", text)
		}
		if err != nil {
			return
		}
	}
}

// stop ends the server as the MCP specification says a client should:
// close its input, wait, SIGTERM, wait, SIGKILL (to the whole process
// group: a server started through npx or a shell has children).
func (p *process) stop() {
	p.once.Do(func() {
		p.stdin.Close()
		select {
		case <-p.exited:
			return
		case <-time.After(stopGrace):
		}
		signalGroup(p.cmd, false)
		select {
		case <-p.exited:
			return
		case <-time.After(stopGrace):
		}
		signalGroup(p.cmd, true)
		<-p.exited
	})
	// Children that outlived the server itself.
	signalGroup(p.cmd, true)
}

// tooLarge reports whether the server sent a line over the limit.
func (p *process) tooLarge() bool { return p.stdout.over.Load() }

// explain adds to err what the process tells: a line over the limit, its
// exit status, its last lines of stderr.
func (p *process) explain(err error) error {
	if p.tooLarge() {
		return fmt.Errorf("%w (%d bytes)", ErrTooLarge, p.stdout.limit)
	}
	select {
	case <-p.exited:
	case <-time.After(100 * time.Millisecond):
	}
	msg := err.Error()
	select {
	case <-p.exited:
		if p.err != nil {
			msg += "; the process ended: " + p.err.Error()
		} else {
			msg += "; the process ended with status 0"
		}
	default:
	}
	if t := p.tail.String(); t != "" {
		msg += "; its stderr ends with: " + t
	}
	return errors.New(msg)
}

// lineLimiter passes a stdio server's output through, failing with
// ErrTooLarge once one line is longer than limit bytes, so that a huge
// answer costs at most limit bytes of memory.
type lineLimiter struct {
	r     io.ReadCloser
	limit int
	n     int // bytes of the current line so far
	over  atomic.Bool
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	if l.over.Load() {
		return 0, ErrTooLarge
	}
	n, err := l.r.Read(p)
	for i := 0; i < n; i++ {
		if p[i] == '\n' {
			l.n = 0
			continue
		}
		l.n++
		if l.limit > 0 && l.n > l.limit {
			l.over.Store(true)
			return i, ErrTooLarge
		}
	}
	return n, err
}

func (l *lineLimiter) Close() error { return l.r.Close() }

// tailBuffer keeps the last lines written to it.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (t *tailBuffer) add(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	t.lines = append(t.lines, s)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b bytes.Buffer
	for i, l := range t.lines {
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(l)
	}
	return b.String()
}
