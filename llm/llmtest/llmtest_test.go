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
// every request after it is refused, over a client that keeps its
// connections alive and had several open (the server's death leaves no
// window in which a later request is still served).
func TestLastAnswerThenRefused(t *testing.T) {
	for _, last := range []int{0, 1, 3} {
		srv := llmtest.New(func(n int, _ *llm.Request) llmtest.Reply {
			return llmtest.Reply{Content: "ok", Last: n == last}
		})
		t.Cleanup(srv.Close)
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
		t.Cleanup(client.CloseIdleConnections)
		post := func() (*http.Response, error) {
			return client.Post(srv.URL()+"/chat/completions", "application/json",
				bytes.NewReader([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)))
		}
		for i := 0; i <= last; i++ {
			resp, err := post()
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
		for i := 0; i < 3; i++ {
			resp, err := post()
			if err == nil {
				resp.Body.Close()
				t.Fatalf("last=%d: request %d after the last answer was served (%d)", last, last+1+i, resp.StatusCode)
			}
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("last=%d: request %d after the last answer: %v, want connection refused", last, last+1+i, err)
			}
		}
		if got := len(srv.Requests()); got != last+1 {
			t.Errorf("last=%d: the server saw %d requests, want %d", last, got, last+1)
		}
	}
}
