package upstream_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/upstream"
)

// A RapidAPI proxy that says the API does not exist: the call is
// classified as "not found" and marked as not cacheable, so a composing
// backend falls through to simulation.
func ExampleBackend_Invoke() {
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"error": "", "response": "{'message': \"API doesn't exists\"}"}`)
	}))
	defer proxy.Close()

	b, err := upstream.New(upstream.Config{ProxyURL: proxy.URL + "/rapidapi", ToolbenchKey: "my-key"})
	if err != nil {
		fmt.Println(err)
		return
	}
	tool := &toolenv.Tool{ID: "toolbench/songkick_concert_for_theclique", Name: "songkick_concert_for_theclique",
		Title: "Songkick concert", Category: "Data", Group: "TheClique"}
	r := b.Invoke(context.Background(), &toolenv.Call{Tool: tool, Args: map[string]any{"id_conc": "1"}})
	fmt.Println(r.Status, r.Meta[upstream.MetaClass], r.Meta[upstream.MetaRule], r.Meta[upstream.MetaCacheable])
	// Output: not_found not_found text_not_found false
}
