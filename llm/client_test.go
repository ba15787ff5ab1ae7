package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// memRecorder is an in-memory Recorder (store.Store is the real one).
type memRecorder struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (r *memRecorder) Lookup(_ context.Context, key string) ([]byte, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[key]
	return v, ok, nil
}

func (r *memRecorder) Record(_ context.Context, key string, _, resp []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string][]byte{}
	}
	r.m[key] = resp
	return nil
}

func chat(t *testing.T, c *llm.Client) (*llm.Response, error) {
	t.Helper()
	return c.Chat(context.Background(), &llm.Request{
		Model:       "m",
		Messages:    []llm.Message{{Role: "user", Content: "hi"}},
		Temperature: llm.Float(0),
		Seed:        llm.Int(42),
	})
}

func TestChatSendsTemperatureZeroAndSeed(t *testing.T) {
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: "hello"}))
	defer srv.Close()
	resp, err := chat(t, llm.New(srv.URL(), llm.Options{APIKey: "k"}))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "hello" {
		t.Fatalf("text = %q", resp.Text())
	}
	var sent map[string]any
	json.Unmarshal(srv.RawRequests()[0], &sent)
	if sent["temperature"] != 0.0 || sent["seed"] != 42.0 {
		t.Fatalf("sent %v", sent)
	}
}

func TestChatRetriesThenSucceeds(t *testing.T) {
	srv := llmtest.New(llmtest.Script(
		llmtest.Reply{Status: 500},
		llmtest.Reply{Status: 429, RetryAfter: 0},
		llmtest.Reply{Content: "ok"},
	))
	defer srv.Close()
	resp, err := chat(t, llm.New(srv.URL(), llm.Options{Backoff: time.Millisecond}))
	if err != nil || resp.Text() != "ok" {
		t.Fatalf("resp=%v err=%v", resp, err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("requests = %d, want 3", n)
	}
}

func TestChatErrors(t *testing.T) {
	tests := []struct {
		name    string
		reply   llmtest.Reply
		retries int
		want    string
	}{
		{"unauthorized names the key", llmtest.Reply{Status: 401}, 3, "API key"},
		{"404 names the base URL", llmtest.Reply{Status: 404}, 3, "base URL"},
		{"garbage body", llmtest.Reply{Raw: "<html>oops</html>"}, 3, "not a chat completion"},
		{"no choices", llmtest.Reply{Raw: `{"choices":[]}`}, 3, "no choices"},
		{"persistent 503 gives up", llmtest.Reply{Status: 503}, 1, "after 2 attempts"},
		{"hang hits the timeout", llmtest.Reply{Delay: 5 * time.Second}, -1, "no answer within"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script(tt.reply))
			defer srv.Close()
			c := llm.New(srv.URL(), llm.Options{Backoff: time.Millisecond, MaxRetries: tt.retries, Timeout: 100 * time.Millisecond})
			_, err := chat(t, c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestChatDeadEndpoint(t *testing.T) {
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: "x"}))
	url := srv.URL()
	srv.Close()
	_, err := chat(t, llm.New(url, llm.Options{Backoff: time.Millisecond, MaxRetries: 1}))
	var le *llm.Error
	if !errors.As(err, &le) || !le.Retryable || !strings.Contains(err.Error(), "is up") {
		t.Fatalf("err = %v", err)
	}
}

func TestRecordAndReplay(t *testing.T) {
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: "first"}, llmtest.Reply{Content: "second"}))
	rec := &memRecorder{}
	resp, err := chat(t, llm.New(srv.URL(), llm.Options{Recorder: rec}))
	if err != nil || resp.Replayed {
		t.Fatal(resp, err)
	}
	url := srv.URL()
	srv.Close() // replay must not need the network
	rep, err := chat(t, llm.New(url, llm.Options{Recorder: rec, Replay: true}))
	if err != nil || rep.Text() != "first" || !rep.Replayed {
		t.Fatalf("replay = %v, %v", rep, err)
	}
	_, err = llm.New(url, llm.Options{Recorder: rec, Replay: true}).Chat(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{{Role: "user", Content: "never asked"}}})
	if !errors.Is(err, llm.ErrNotRecorded) {
		t.Fatalf("err = %v, want ErrNotRecorded", err)
	}
}

func TestKeyIgnoresFormatting(t *testing.T) {
	a := llm.Key("chat", []byte(`{"model":"m","temperature":0}`))
	b := llm.Key("chat", []byte(`{ "temperature": 0.0, "model": "m" }`))
	c := llm.Key("embeddings", []byte(`{"model":"m","temperature":0}`))
	if a != b || a == c {
		t.Fatalf("a=%s b=%s c=%s", a, b, c)
	}
}

func TestEmbed(t *testing.T) {
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Embeddings: [][]float32{{1, 0}, {0, 1}}}))
	defer srv.Close()
	vs, err := llm.New(srv.URL(), llm.Options{}).Embed(context.Background(), "e", []string{"a", "b"})
	if err != nil || len(vs) != 2 || vs[1][1] != 1 {
		t.Fatalf("vs=%v err=%v", vs, err)
	}
}

// TestQueryInBaseURL: an API key in the base URL's query string goes with
// every request after the path, and never into messages.
func TestQueryInBaseURL(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.RequestURI())
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"error": {"message": "boom"}}`))
	}))
	defer srv.Close()
	for base, want := range map[string]string{
		srv.URL + "/v1?api-key=SECRET":  "/v1/chat/completions?api-key=SECRET",
		srv.URL + "/v1/?api-key=SECRET": "/v1/chat/completions?api-key=SECRET",
		srv.URL + "?api-key=SECRET":     "/v1/chat/completions?api-key=SECRET",
		srv.URL + "/v1":                 "/v1/chat/completions",
	} {
		got = nil
		c := llm.New(base, llm.Options{MaxRetries: -1})
		_, err := c.Chat(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{{Role: "user", Content: "hi"}}})
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s: requested %v, want %s", base, got, want)
		}
		if err == nil || strings.Contains(err.Error(), "SECRET") || strings.Contains(c.Endpoint(), "SECRET") {
			t.Errorf("%s: the key shows: %v / %s", base, err, c.Endpoint())
		}
	}
	// A transport error names the URL; its key is hidden too.
	c := llm.New("http://127.0.0.1:1/v1?api-key=SECRET", llm.Options{MaxRetries: -1})
	_, err := c.Chat(context.Background(), &llm.Request{Model: "m"})
	if err == nil || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "api-key=xxxxx") {
		t.Fatalf("transport error: %v", err)
	}
}

// TestChatAnswerOverTheLimit: an answer longer than MaxResponseBytes is
// an error saying so, asked once (the endpoint would send it again),
// never a truncated answer.
func TestChatAnswerOverTheLimit(t *testing.T) {
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: strings.Repeat("z", 8<<10)}))
	defer srv.Close()
	_, err := chat(t, llm.New(srv.URL(), llm.Options{Backoff: time.Millisecond, MaxResponseBytes: 4 << 10}))
	if err == nil || !strings.Contains(err.Error(), "over 4096 bytes") {
		t.Fatalf("err = %v, want the limit named", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	resp, err := chat(t, llm.New(srv.URL(), llm.Options{MaxResponseBytes: 64 << 10}))
	if err != nil || len(resp.Text()) != 8<<10 {
		t.Fatalf("under the limit: %v", err)
	}
}
