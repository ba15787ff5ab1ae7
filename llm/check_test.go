package llm_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/deadport"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

// deadURL returns the URL of a loopback port nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	return deadport.URL(t, "/v1")
}

// TestCheck points Check at real servers that answer in every way an
// endpoint can fail, and at ones that work: each failure is one request,
// a StatusUnavailable error naming the URL, the model and what answered,
// with a hint; credentials never show.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><body>Welcome to nginx!</body></html>"))
	}))
	defer html.Close()
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	for _, tc := range []struct {
		name  string
		reply *llmtest.Reply // served by llmtest; nil: url below
		url   string
		opts  llm.Options
		want  []string // nil: the check passes
	}{
		{name: "a chat completion", reply: &llmtest.Reply{Content: "OK"}},
		{name: "busy (429)", reply: &llmtest.Reply{Status: 429, RetryAfter: 30}},
		{name: "nothing listening", url: deadURL(t), want: []string{"nothing answered (connection refused)", "start the model server"}},
		{name: "bad key", reply: &llmtest.Reply{Status: 401, Raw: `{"error":{"message":"Incorrect API key provided"}}`},
			want: []string{"HTTP 401: Incorrect API key provided", "check the API key"}},
		{name: "unknown model", reply: &llmtest.Reply{Status: 404, Raw: `{"error":{"message":"The model m does not exist."}}`},
			want: []string{"HTTP 404: The model m does not exist.", "the model name"}},
		{name: "server error", reply: &llmtest.Reply{Status: 500}, want: []string{"HTTP 500: test server error 500"}},
		{name: "an HTML page", url: html.URL + "/v1", want: []string{"not an OpenAI chat completion", "Welcome to nginx", "usually ending in /v1"}},
		{name: "a JSON object with no choices", reply: &llmtest.Reply{Raw: `{"status":"ok"}`}, want: []string{"not an OpenAI chat completion", `{\"status\":\"ok\"}`}},
		{name: "not an OpenAI server", url: notFound.URL + "/v1", want: []string{"HTTP 404", "404 page not found"}},
		{name: "too slow", reply: &llmtest.Reply{Delay: 5 * time.Second, Content: "OK"}, opts: llm.Options{Timeout: 100 * time.Millisecond},
			want: []string{"no answer within 100ms", "still loading the model"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url
			var srv *llmtest.Server
			if tc.reply != nil {
				srv = llmtest.New(func(int, *llm.Request) llmtest.Reply { return *tc.reply })
				defer srv.Close()
				url = srv.URL()
			}
			rec := &memRecorder{}
			opts := tc.opts
			opts.Recorder, opts.Reuse = rec, true
			c := llm.New(strings.Replace(url, "http://", "http://user:SECRET1@", 1)+"?api-key=SECRET2", opts)
			err := c.Check(ctx, "m")
			if srv != nil {
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("%d requests, want 1", n)
				} else if r := srv.Requests()[0]; r.Model != "m" || r.Messages[0].Content != llm.CheckPrompt {
					t.Errorf("request %+v", r)
				}
			}
			if len(rec.m) != 0 {
				t.Errorf("the check was recorded: %v", rec.m)
			}
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("the check passed")
			}
			if toolenv.StatusOf(err) != toolenv.StatusUnavailable {
				t.Errorf("status %s", toolenv.StatusOf(err))
			}
			msg := err.Error()
			for _, w := range append(tc.want, `(model "m")`, strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/v1")) {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "SECRET") {
				t.Errorf("%q shows a credential", msg)
			}
		})
	}
}

// TestCheckReplayUsesNoNetwork checks that a client replaying from the
// records passes the check without a request.
func TestCheckReplayUsesNoNetwork(t *testing.T) {
	c := llm.New(deadURL(t), llm.Options{Replay: true, Recorder: &memRecorder{}})
	if err := c.Check(context.Background(), "m"); err != nil {
		t.Fatal(err)
	}
}

// TestPreflight checks each distinct endpoint once, embeddings as
// embeddings, and names every role that gave a failing one.
func TestPreflight(t *testing.T) {
	ctx := context.Background()
	ok := llmtest.New(llmtest.Script(llmtest.Reply{Content: "OK"}))
	defer ok.Close()
	good := llm.New(ok.URL(), llm.Options{})
	if err := llm.Preflight(ctx,
		llm.Endpoint{Role: "--model", Client: good, Model: "m"},
		llm.Endpoint{Role: "--judge-url", Client: good, Model: "m"},
		llm.Endpoint{Role: "--embed-url", Client: good, Model: "e", Embeddings: true},
		llm.Endpoint{Role: "unused"}); err != nil {
		t.Fatal(err)
	}
	if n := len(ok.RawRequests()); n != 2 {
		t.Errorf("%d requests for one chat and one embeddings endpoint, want 2", n)
	}
	dead := llm.New(deadURL(t), llm.Options{})
	err := llm.Preflight(ctx,
		llm.Endpoint{Role: "--model", Client: good, Model: "m"},
		llm.Endpoint{Role: "--judge-url", Client: dead, Model: "j"},
		llm.Endpoint{Role: "--fac-url", Client: dead, Model: "j"})
	if err == nil || !strings.HasPrefix(err.Error(), "--judge-url, --fac-url: model endpoint") || toolenv.StatusOf(err) != toolenv.StatusUnavailable {
		t.Fatalf("err = %v", err)
	}
	emb := llmtest.New(llmtest.Script(llmtest.Reply{Raw: `{"data": []}`}))
	defer emb.Close()
	err = llm.Preflight(ctx, llm.Endpoint{Role: "--embed-url", Client: llm.New(emb.URL(), llm.Options{}), Model: "e", Embeddings: true})
	if err == nil || !strings.Contains(err.Error(), "not an OpenAI embeddings response") {
		t.Fatalf("err = %v", err)
	}
}

// A command checks its model before the first episode: a dead endpoint
// fails at once, saying what answered.
func ExampleClient_Check() {
	srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: "OK"}))
	defer srv.Close()
	ctx := context.Background()
	fmt.Println(llm.New(srv.URL(), llm.Options{}).Check(ctx, "qwen"))

	addr, release, err := deadport.Bind() // bound, not listening: refused, and nobody else's
	if err != nil {
		panic(err)
	}
	defer release()
	dead := "http://" + addr + "/v1"
	err = llm.New(dead, llm.Options{}).Check(ctx, "qwen")
	fmt.Println(strings.Replace(err.Error(), dead, "URL", 1))
	// Output:
	// <nil>
	// model endpoint URL (model "qwen") failed its check: nothing answered (connection refused) (start the model server, or check the URL's host and port)
}
