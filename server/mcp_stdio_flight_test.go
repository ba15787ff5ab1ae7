package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
)

// eofReader reads r and closes eof when r is exhausted.
type eofReader struct {
	r    io.Reader
	eof  chan struct{}
	once sync.Once
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.once.Do(func() { close(e.eof) })
	}
	return n, err
}

func (e *eofReader) Close() error { return nil }

// waitingHandler holds every call until release is closed.
type waitingHandler struct {
	next    toolenv.Handler
	release <-chan struct{}
}

func (h waitingHandler) Invoke(ctx context.Context, call *toolenv.Call) *toolenv.Result {
	select {
	case <-h.release:
	case <-ctx.Done():
		return toolenv.Errorf(toolenv.StatusTimeout, "", "cancelled before the input ended: %v", context.Cause(ctx))
	}
	return h.next.Invoke(ctx, call)
}

// TestMCPStdioAnswersWhatIsInFlightAtEndOfInput pipes initialize,
// initialized, a tools/call and a ping into the stdio transport and ends
// the input, with the call held until the end of the input was read (as
// with `printf … | toolenv mcp`, where the input ends long before a call
// is answered): every request is answered, the call with its result,
// before the session ends. The go-sdk cancels what is in flight when
// the input ends, so without stdioFlight only the first answers come.
func TestMCPStdioAnswersWhatIsInFlightAtEndOfInput(t *testing.T) {
	fx := newMCPFixture(t)
	in := &eofReader{r: strings.NewReader(strings.Join([]string{
		initMsg(1, "2025-11-25"), initializedMsg,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"current_weather","arguments":{"city":"Paris"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	}, "\n") + "\n"), eof: make(chan struct{})}
	srv, err := NewMCPServer(MCPOptions{Pipeline: waitingHandler{fx.pipeline, in.eof}, Registry: fx.reg})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.Run(ctx, &MCPStdioTransport{Reader: in, Writer: &out}); err != nil && ctx.Err() != nil {
		t.Fatalf("the session did not end by itself: %v", err)
	}
	var lines []json.RawMessage
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		lines = append(lines, append(json.RawMessage(nil), sc.Bytes()...))
	}
	got := responses(t, lines)
	for _, id := range []string{"1", "2", "3"} {
		if m, ok := got[id]; !ok || m.Error != nil {
			t.Errorf("request %s: answer %+v (present %v); output:\n%s", id, m.Error, ok, out.String())
		}
	}
	if m := got["2"]; !strings.Contains(string(m.Result), "Paris") {
		t.Errorf("the call's result does not hold its answer: %s", m.Result)
	}
}
