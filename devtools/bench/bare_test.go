package bench

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// TestBareSendsSameHeaders: the baseline answers each request with the
// next recorded body and, given a headers file, that body's headers, so
// that it sends the bytes toolenv sends; without one it sends the body
// and Content-Type only; a headers file that does not match the answers
// is refused.
func TestBareSendsSameHeaders(t *testing.T) {
	dir := t.TempDir()
	answers := [][]byte{[]byte(`{"error":"","response":"a"}`), []byte(`{"error":"","response":"b"}`)}
	headers := []http.Header{
		{"X-Toolenv-Status": {"ok"}, "X-Toolenv-Source": {"cache"}, "X-Toolenv-Origin": {"bench"}},
		{"X-Toolenv-Status": {"ok"}, "X-Toolenv-Source": {"cache"}, "X-Toolenv-Origin": {"import"}},
	}
	answersFile, headersFile, shortFile := filepath.Join(dir, "a.json"), filepath.Join(dir, "h.json"), filepath.Join(dir, "short.json")
	for f, v := range map[string]any{answersFile: answers, headersFile: headers, shortFile: headers[:1]} {
		if err := toolenv.WriteJSONFile(f, v); err != nil {
			t.Fatal(err)
		}
	}
	serve := func(t *testing.T, headersFile string) string {
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() { done <- ServeBare(ctx, answersFile, headersFile, "127.0.0.1:0", pw); pw.Close() }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
		line, err := bufio.NewReader(pr).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		go io.Copy(io.Discard, pr)
		return strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
	}
	for _, withHeaders := range []bool{true, false} {
		f := ""
		if withHeaders {
			f = headersFile
		}
		url := serve(t, f)
		seen := map[string]string{}
		for range 4 {
			resp, err := http.Post(url+"/virtual", "application/json", strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			origin := resp.Header.Get("X-Toolenv-Origin")
			if resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("Content-Type %q", resp.Header.Get("Content-Type"))
			}
			if !withHeaders {
				if origin != "" || resp.Header.Get("X-Toolenv-Status") != "" {
					t.Fatalf("headers sent without a headers file: %v", resp.Header)
				}
				continue
			}
			if resp.Header.Get("X-Toolenv-Source") != "cache" || resp.Header.Get("X-Toolenv-Status") != "ok" {
				t.Fatalf("headers %v", resp.Header)
			}
			seen[string(body)] = origin
		}
		if withHeaders && (seen[string(answers[0])] != "bench" || seen[string(answers[1])] != "import") {
			t.Fatalf("each body with its own headers: %v", seen)
		}
	}
	err := ServeBare(context.Background(), answersFile, shortFile, "127.0.0.1:0", io.Discard)
	if err == nil || !strings.Contains(err.Error(), "one header map per answer") {
		t.Fatalf("a headers file of 1 map for 2 answers: %v", err)
	}
}
