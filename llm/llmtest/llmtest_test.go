package llmtest_test

import (
	"bytes"
	"errors"
	"net/http"
	"syscall"
	"testing"

	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// TestLastAnswerThenRefused: the answer marked Last arrives whole, and
// no request after it is served: not on the connections three clients
// that keep their connections alive had open (the server dropped them),
// and a new connection is refused.
func TestLastAnswerThenRefused(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	newClient := func() *http.Client {
		c := &http.Client{Transport: &http.Transport{}}
		t.Cleanup(c.CloseIdleConnections)
		return c
	}
	for _, last := range []int{0, 1, 3} {
		srv := llmtest.New(func(n int, _ *llm.Request) llmtest.Reply {
			return llmtest.Reply{Content: "ok", Last: n == last}
		})
		t.Cleanup(srv.Close)
		post := func(c *http.Client) (*http.Response, error) {
			return c.Post(srv.URL()+"/chat/completions", "application/json", bytes.NewReader(body))
		}
		clients := []*http.Client{newClient(), newClient(), newClient()}
		for i := 0; i <= last; i++ { // each client on its own connection, kept open
			resp, err := post(clients[i%len(clients)])
			if err != nil {
				t.Fatalf("last=%d: request %d: %v", last, i, err)
			}
			var buf bytes.Buffer
			buf.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Contains(buf.Bytes(), []byte(`"content":"ok"`)) {
				t.Fatalf("last=%d: request %d: %d %s", last, i, resp.StatusCode, buf.Bytes())
			}
		}
		fresh := newClient()
		for i, c := range append(clients, fresh) {
			resp, err := post(c)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("last=%d: client %d's request after the last answer was served (%d)", last, i, resp.StatusCode)
			}
			if c == fresh && !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("last=%d: a new connection after the last answer: %v, want connection refused", last, err)
			}
		}
		if got := len(srv.Requests()); got != last+1 {
			t.Errorf("last=%d: the server saw %d requests, want %d", last, got, last+1)
		}
	}
}
