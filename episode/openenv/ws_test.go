package openenv_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/episode"
	"github.com/toolenv/toolenv/episode/openenv"
)

// demoServer serves the demo's episodes at /openenv with opts, without
// tokens; cfg adjusts the environment.
func demoServer(t *testing.T, cfg *environment.Config, opts openenv.Options) (*episode.Env, string) {
	t.Helper()
	ctx := context.Background()
	env, err := environment.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	eps, err := episode.New(ctx, env, episode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eps.Close() })
	g, err := env.Guard()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(openenv.Mount(http.NotFoundHandler(), g, eps, opts))
	t.Cleanup(srv.Close)
	return eps, srv.URL + openenv.Prefix
}

func dialWS(t *testing.T, base string) (*websocket.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, strings.Replace(base, "http://", "ws://", 1)+"/ws", nil)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
		}
		return nil, err
	}
	return conn, nil
}

func send(t *testing.T, conn *websocket.Conn, msg string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := conn.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	_, b, err := conn.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// closedBy waits until the server closes conn (a read fails) and
// returns the close status (-1 when the connection just ended).
func closedBy(t *testing.T, conn *websocket.Conn) websocket.StatusCode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		_, _, err := conn.Read(ctx)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			t.Fatal("the server did not close the WebSocket")
		}
		return websocket.CloseStatus(err)
	}
}

// TestWSDeadlines: a WebSocket that sends nothing for --ws-idle is
// closed (with its episode), as is one whose frame header claims 2^62
// bytes, and one open for --ws-max-lifetime even while it is busy.
func TestWSDeadlines(t *testing.T) {
	eps, base := demoServer(t, nil, openenv.Options{WSIdle: 300 * time.Millisecond})
	t.Run("idle", func(t *testing.T) {
		conn, err := dialWS(t, base)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()
		r := send(t, conn, `{"type": "reset", "data": {"task_id": "demo-3"}}`)
		id := r["data"].(map[string]any)["observation"].(map[string]any)["episode_id"].(string)
		if st := closedBy(t, conn); st != websocket.StatusPolicyViolation {
			t.Fatalf("closed with %v, want policy violation", st)
		}
		if _, err := waitRecord(eps, id); err != nil {
			t.Fatalf("the idle WebSocket's episode: %v", err)
		}
	})
	t.Run("huge frame", func(t *testing.T) {
		u := strings.TrimPrefix(base, "http://")
		host := u[:strings.Index(u, "/")]
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /openenv/ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", host)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("handshake: %v %v", resp, err)
		}
		hdr := []byte{0x81, 0x80 | 127, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}
		binary.BigEndian.PutUint64(hdr[2:10], 1<<62)
		if _, err := c.Write(hdr); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // a safety net
		_, err = io.Copy(io.Discard, br)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("the server kept a WebSocket whose frame claims 2^62 bytes open")
		}
	})
	t.Run("lifetime", func(t *testing.T) {
		_, base := demoServer(t, nil, openenv.Options{WSIdle: -1, WSMaxLifetime: time.Second}) // never idle
		conn, err := dialWS(t, base)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for ctx.Err() == nil { // busy: a message at a time
			if err := conn.Write(ctx, websocket.MessageText, []byte(`{"type": "state"}`)); err != nil {
				break
			}
			if _, _, err := conn.Read(ctx); err != nil {
				if st := websocket.CloseStatus(err); st != websocket.StatusPolicyViolation {
					t.Fatalf("closed with %v (%v), want policy violation", st, err)
				}
				return
			}
		}
		t.Fatal("a busy WebSocket outlived --ws-max-lifetime")
	})
}

// TestWSPerClientCap: one client holds at most --max-ws-per-client
// WebSockets (the next handshake is refused with 429, naming the flag),
// and its resets over HTTP still go through.
func TestWSPerClientCap(t *testing.T) {
	_, base := demoServer(t, nil, openenv.Options{MaxWSPerClient: 2})
	var conns []*websocket.Conn
	for i := 0; i < 2; i++ {
		c, err := dialWS(t, base)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		conns = append(conns, c)
	}
	if _, err := dialWS(t, base); err == nil || !strings.Contains(err.Error(), "HTTP 429") {
		t.Fatalf("a third WebSocket: %v, want 429", err)
	}
	resp, err := http.Post(base+"/reset", "application/json", strings.NewReader(`{"task_id": "demo-3"}`))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("an HTTP reset of the same client: %v %v", resp, err)
	}
	resp.Body.Close()
	conns[0].Close(websocket.StatusNormalClosure, "")
	deadline := time.Now().Add(time.Minute) // the server counts the close as it sees it
	for {
		c, err := dialWS(t, base)
		if err == nil {
			c.CloseNow()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no WebSocket after one of two was closed: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWSClientGoneCutsStep: a client gone in the middle of a step cancels
// the step's calls (the upstream request it was waiting on ends at once,
// not at its 10-minute timeout) and the step does not happen.
func TestWSClientGoneCutsStep(t *testing.T) {
	arrived, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body) // then the server sees its client go
		arrived <- struct{}{}
		<-r.Context().Done()
		cancelled <- struct{}{}
	}))
	defer up.Close()
	eps, base := demoServer(t, &environment.Config{Upstream: environment.UpstreamConfig{URL: up.URL, Timeout: 10 * time.Minute}}, openenv.Options{})
	conn, err := dialWS(t, base)
	if err != nil {
		t.Fatal(err)
	}
	r := send(t, conn, `{"type": "reset", "data": {"task_id": "demo-3"}}`)
	id := r["data"].(map[string]any)["observation"].(map[string]any)["episode_id"].(string)
	ctx := context.Background()
	if err := conn.Write(ctx, websocket.MessageText, []byte(`{"type": "step", "data": {"type": "call_tool", "tool_name": "convert_currency", "arguments": {"amount": 1, "from": "EUR", "to": "USD"}}}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(time.Minute):
		t.Fatal("the step's call never reached the upstream")
	}
	conn.CloseNow() // the client is gone
	select {
	case <-cancelled:
	case <-time.After(time.Minute):
		t.Fatal("the step's call was not cancelled when its client went")
	}
	rec, err := waitRecord(eps, id)
	if err != nil || len(rec.Steps) != 0 {
		t.Fatalf("the record of the episode whose client left mid-step: %+v %v", rec, err)
	}
}

// waitRecord reads an episode's record once its WebSocket's end closed
// it (an error when it is not closed).
func waitRecord(eps *episode.Env, id string) (*episode.Record, error) {
	deadline := time.Now().Add(time.Minute) // a safety net
	for {
		_, err := eps.Step(context.Background(), "", id, &episode.Action{Type: episode.ActionListTools})
		if errors.Is(err, episode.ErrClosed) {
			return eps.Record(context.Background(), "", id)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the episode was not closed: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
