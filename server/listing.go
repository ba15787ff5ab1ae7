package server

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// The pages of GET /collections/{name}/tools.
const (
	// ListPageSize is the page size of a listing that asks for none: a
	// collection of at most this many tools is listed whole, as it
	// always was.
	ListPageSize = 1000
	// ListMaxPageSize is the largest page a listing may ask for (limit=all
	// lists every tool, whatever the count).
	ListMaxPageSize = 10000
)

// listPage picks the page of tools a listing request asks for:
// ?limit=N (1 to ListMaxPageSize, or "all"; default ListPageSize) and
// ?cursor=C (the X-Next-Cursor of the previous page). It returns the
// page, the cursor of the next page ("" on the last), or an error Result
// for a bad limit or cursor.
func listPage(tools []*toolenv.Tool, q url.Values) (page []*toolenv.Tool, next string, res *toolenv.Result) {
	limit := ListPageSize
	switch l := q.Get("limit"); l {
	case "":
	case "all":
		limit = len(tools)
	default:
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > ListMaxPageSize {
			return nil, "", toolenv.Errorf(toolenv.StatusBadRequest, fmt.Sprintf("limit is a number of tools from 1 to %d, or all", ListMaxPageSize), "bad limit %q", l)
		}
		limit = n
	}
	start := 0
	if c := q.Get("cursor"); c != "" {
		raw, err := base64.RawURLEncoding.DecodeString(c)
		name, ok := strings.CutPrefix(string(raw), listCursorPrefix)
		if err != nil || !ok {
			return nil, "", toolenv.Errorf(toolenv.StatusBadRequest, "pass the X-Next-Cursor of the previous page, or no cursor for the first", "cursor %q was not issued by this server", c)
		}
		start = -1
		for i, t := range tools {
			if t.Name == name {
				start = i + 1
				break
			}
		}
		if start < 0 {
			return nil, "", toolenv.Errorf(toolenv.StatusBadRequest, "list again from the first page", "the cursor's tool %q is no longer in this collection (a new version was loaded)", name)
		}
	}
	end := min(start+limit, len(tools))
	if end < len(tools) && end > start {
		next = base64.RawURLEncoding.EncodeToString([]byte(listCursorPrefix + tools[end-1].Name))
	}
	return tools[start:end], next, nil
}

const listCursorPrefix = "after:"

// setPageHeaders reports a listing's paging: the total count, and for
// every page but the last the next page's cursor and a Link to it.
func setPageHeaders(w http.ResponseWriter, r *http.Request, total int, next string) {
	h := w.Header()
	h.Set("X-Total-Count", strconv.Itoa(total))
	if next == "" {
		return
	}
	h.Set("X-Next-Cursor", next)
	q := r.URL.Query()
	q.Set("cursor", next)
	u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	h.Set("Link", "<"+u.String()+`>; rel="next"`)
}
