package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/devtools/toolbenchgen"
	"github.com/toolenv/toolenv/toolbench"
)

func getList(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 1<<16)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp, []byte(b.String())
}

// TestListingPages pages GET /collections/{name}/tools: a small
// collection comes whole and unchanged, a large one in pages linked by
// cursors, every tool once and in order, in each format; bad limits and
// cursors are 400s that say what to send.
func TestListingPages(t *testing.T) {
	big := toolbench.NewCollection(toolbenchgen.Docs(toolbenchgen.Options{APIs: 2500, Seed: 2}), toolbench.CollectionOptions{})
	fx := newMCPFixture(t, demoCollection(t), big)
	srv := httptest.NewServer(New(Options{Pipeline: fx.pipeline, Registry: fx.reg}))
	defer srv.Close()

	resp, body := getList(t, srv.URL+"/collections/demo/tools")
	var small []toolenv.Tool
	if err := json.Unmarshal(body, &small); err != nil || len(small) != 6 || resp.Header.Get("X-Next-Cursor") != "" || resp.Header.Get("Link") != "" {
		t.Fatalf("the demo listing: %d tools, %v, cursor %q: want all 6 in one array, no paging", len(small), err, resp.Header.Get("X-Next-Cursor"))
	}

	var names []string
	url, pages := srv.URL+"/collections/toolbench/tools?format=openai", 0
	for url != "" {
		resp, body := getList(t, url)
		if resp.StatusCode != 200 || resp.Header.Get("X-Total-Count") != "2500" {
			t.Fatalf("%s: %d, total %q: %s", url, resp.StatusCode, resp.Header.Get("X-Total-Count"), body)
		}
		var page []struct {
			Function struct{ Name string } `json:"function"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		if len(page) > ListPageSize {
			t.Fatalf("a page of %d tools", len(page))
		}
		for _, p := range page {
			names = append(names, p.Function.Name)
		}
		pages++
		url = ""
		if link := resp.Header.Get("Link"); link != "" {
			url = srv.URL + strings.TrimSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`)
		}
	}
	if pages != 3 || len(names) != 2500 {
		t.Fatalf("%d pages, %d tools; want 3 pages, 2500 tools", pages, len(names))
	}
	for i, tool := range big.Tools {
		if names[i] != tool.Name {
			t.Fatalf("tool %d is %s, want %s (collection order)", i, names[i], tool.Name)
		}
	}

	resp, body = getList(t, srv.URL+"/collections/toolbench/tools?format=mcp&limit=700")
	var m struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor string            `json:"nextCursor"`
	}
	if err := json.Unmarshal(body, &m); err != nil || len(m.Tools) != 700 || m.NextCursor == "" || m.NextCursor != resp.Header.Get("X-Next-Cursor") {
		t.Fatalf("format=mcp page: %d tools, cursor %q (header %q), %v", len(m.Tools), m.NextCursor, resp.Header.Get("X-Next-Cursor"), err)
	}
	if resp, body := getList(t, srv.URL+"/collections/toolbench/tools?limit=all"); resp.Header.Get("X-Next-Cursor") != "" || strings.Count(string(body), `"collection":"toolbench"`) != 2500 {
		t.Errorf("limit=all: cursor %q", resp.Header.Get("X-Next-Cursor"))
	}
	for q, want := range map[string]string{
		"limit=0": "limit is a number of tools from 1 to 10000", "limit=ten": "bad limit", "limit=10001": "from 1 to 10000",
		"cursor=bm9wZQ": "not issued by this server", "format=xml": "unknown format",
	} {
		resp, body := getList(t, srv.URL+"/collections/toolbench/tools?"+q)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), want) {
			t.Errorf("?%s: %d %s, want 400 saying %q", q, resp.StatusCode, body, want)
		}
	}
	// A cursor whose tool is gone after a hot-load says to start again.
	v2 := cloneCollection(big)
	v2.Tools = v2.Tools[1500:]
	cursor := m.NextCursor // after tool 700
	if _, err := fx.reg.Replace(v2, mustVirtual(t, v2)); err != nil {
		t.Fatal(err)
	}
	resp, body = getList(t, srv.URL+"/collections/toolbench/tools?cursor="+cursor)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "no longer in this collection") {
		t.Errorf("a cursor past a hot-load: %d %s", resp.StatusCode, body)
	}
}
