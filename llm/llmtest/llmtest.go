package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/toolenv/toolenv/llm"
)

// Reply is what the server answers to one request.
type Reply struct {
	// Content is the assistant message's text.
	Content string
	// ToolCalls are native tool calls in the assistant message.
	ToolCalls []llm.ToolCall
	// Status, when not 0 or 200, makes the server answer with that HTTP
	// status and an OpenAI-style error body (or Raw).
	Status int
	// RetryAfter is sent as the Retry-After header (seconds) when > 0.
	RetryAfter int
	// Raw, when set, is sent as the body verbatim (for garbage answers).
	Raw string
	// Delay is waited before answering (the request's context ends it).
	Delay time.Duration
	// Embeddings answers an embeddings request.
	Embeddings [][]float32
	// Embed, when set, makes each input's vector of an embeddings
	// request from its text (it wins over Embeddings).
	Embed func(text string) []float32
	// Usage is reported; zero means a token estimate from lengths.
	Usage llm.Usage
	// Last makes this the server's last answer: before it is written the
	// server stops accepting connections and closes its idle ones, and
	// this answer's connection closes after it, so every later request
	// is refused (a model that dies mid-run, with no window in which a
	// later request could still be served).
	Last bool
}

// Func decides the reply to a request. n counts requests from 0.
type Func func(n int, req *llm.Request) Reply

// Server is a running test server.
type Server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*llm.Request
	raw  [][]byte
	fn   Func
}

// New starts a server answering with fn; close it with Close.
func New(fn Func) *Server {
	s := &Server{fn: fn}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Listen starts a server answering with fn on addr ("127.0.0.1:8000"),
// for programs that need the model at a fixed address; close it with
// Close.
func Listen(addr string, fn Func) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("llmtest: listen on %s: %w", addr, err)
	}
	s := &Server{fn: fn}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Server.Listener.Close()
	s.Server.Listener = l
	s.Server.Start()
	return s, nil
}

// Script returns a Func that answers with replies in order, repeating the
// last one when they run out.
func Script(replies ...Reply) Func {
	return func(n int, _ *llm.Request) Reply {
		if len(replies) == 0 {
			return Reply{Content: ""}
		}
		if n >= len(replies) {
			n = len(replies) - 1
		}
		return replies[n]
	}
}

// URL returns the base URL clients use ("http://127.0.0.1:port/v1").
func (s *Server) URL() string { return s.Server.URL + "/v1" }

// Requests returns the chat requests received so far.
func (s *Server) Requests() []*llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*llm.Request(nil), s.reqs...)
}

// RawRequests returns the bodies received so far, as sent.
func (s *Server) RawRequests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.raw...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req llm.Request
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, &req)
	s.raw = append(s.raw, body)
	s.mu.Unlock()
	rep := s.fn(n, &req)
	if rep.Last {
		s.Server.Listener.Close()
		s.Server.Config.SetKeepAlivesEnabled(false) // closes the idle connections; this one closes after its answer
	}
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.RetryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(rep.RetryAfter))
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		w.WriteHeader(rep.Status)
		if rep.Raw != "" {
			io.WriteString(w, rep.Raw)
			return
		}
		fmt.Fprintf(w, `{"error":{"message":"test server error %d","type":"server_error"}}`, rep.Status)
		return
	}
	if rep.Raw != "" {
		io.WriteString(w, rep.Raw)
		return
	}
	switch r.URL.Path {
	case "/v1/embeddings":
		var er struct {
			Input []string `json:"input"`
		}
		_ = json.Unmarshal(body, &er)
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		data := make([]item, 0, len(er.Input))
		for i := range er.Input {
			var v []float32
			if rep.Embed != nil {
				v = rep.Embed(er.Input[i])
			} else if i < len(rep.Embeddings) {
				v = rep.Embeddings[i]
			} else {
				v = []float32{float32(len(er.Input[i])), 1}
			}
			data = append(data, item{Index: i, Embedding: v})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": "test"})
		return
	}
	usage := rep.Usage
	if usage.TotalTokens == 0 {
		usage.PromptTokens = len(body) / 4
		usage.CompletionTokens = len(rep.Content)/4 + 1
		usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
	}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	resp := llm.Response{
		ID:    fmt.Sprintf("chatcmpl-test-%d", n),
		Model: req.Model,
		Choices: []llm.Choice{{
			Message:      llm.Message{Role: "assistant", Content: rep.Content, ToolCalls: rep.ToolCalls},
			FinishReason: finish,
		}},
		Usage: usage,
	}
	json.NewEncoder(w).Encode(resp)
}
