package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
)

// The stateful MCP fuzz: a byte string is read as a sequence of MCP
// messages and HTTP moves — initialize (twice, at any version), calls
// before initialize, batches, notifications, cancellations, unknown and
// undeclared methods, malformed JSON, DELETE, GET streams with and
// without Last-Event-ID, foreign session ids — and played against one
// server over streamable HTTP and over stdio. The process must survive
// (a panic in any goroutine ends the test binary), every answer must be
// valid JSON-RPC with a real error code, every HTTP status below 500,
// and a stdio session must answer a ping after every move.

// mcpOps are the moves a sequence is made of.
const (
	opInit = iota
	opInitialized
	opPing
	opList
	opCall
	opCallBad
	opUnknown
	opUnknownNote
	opMalformed
	opBatch
	opCancel
	opResources
	opSetLevel
	opUndeclared
	opDelete
	opGet
	opNewSession
	opForeignSession
	opDupID
	opSearch
	mcpOpCount
)

// seqReader hands out the bytes of a sequence, zeros once they run out.
type seqReader struct {
	b []byte
	i int
}

func (r *seqReader) byte() byte {
	if r.i >= len(r.b) {
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

func (r *seqReader) pick(n int) int { return int(r.byte()) % n }

func (r *seqReader) done() bool { return r.i >= len(r.b) }

var fuzzVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2026-07-28", "1999-01-01", ""}

var fuzzMalformed = []string{
	`{"jsonrpc":"2.0","id":1,"method":`,
	`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
	`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
	`{"id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":7}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1,2]}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":7}}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`,
	`{"jsonrpc":"2.0","result":{}}`,
	`[[]]`, `[1,2]`, `"ping"`, `null`, `42`, `{}`, `[`, "\x00\xff", `{"jsonrpc":"2.0","id":"` + strings.Repeat("x", 3000) + `","method":"ping"}`,
}

// mcpMessage makes the JSON-RPC text of one move (for a batch, of its
// elements), with id a fresh request id.
func mcpMessage(r *seqReader, op int, id int, lastID int) string {
	switch op {
	case opInit:
		return initMsg(id, fuzzVersions[r.pick(len(fuzzVersions))])
	case opInitialized:
		return initializedMsg
	case opPing:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id)
	case opList:
		cursors := []string{"", encodeMCPCursor("m"), "bm9wZQ", "!!"}
		c := cursors[r.pick(len(cursors))]
		if c == "" {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id)
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{"cursor":%q}}`, id, c)
	case opCall:
		args := []string{`{"city":"Paris"}`, `{"city":7}`, `{}`, `null`, `[1]`, `"x"`, `{"city":"Oslo","days":3,"extra":{"a":[1,2,{"b":null}]}}`}
		names := []string{"current_weather", "weather_forecast", "demo/get_book", "demo__exchange_rates", "search_books"}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"toolenv/session":"s%d","progressToken":%d}}}`,
			id, names[r.pick(len(names))], args[r.pick(len(args))], r.pick(3), id)
	case opCallBad:
		bad := []string{`{"name":"no_such_tool"}`, `{"name":""}`, `{"name":7}`, `{}`, `{"name":"current_weather","arguments":{"city":"` + strings.Repeat("é", 500) + `"}}`}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, bad[r.pick(len(bad))])
	case opUnknown:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/frobnicate","params":{}}`, id)
	case opUnknownNote:
		return `{"jsonrpc":"2.0","method":"notifications/frobnicated"}`
	case opMalformed:
		return fuzzMalformed[r.pick(len(fuzzMalformed))]
	case opCancel:
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"fuzz"}}`, lastID-r.pick(3))
	case opResources:
		reqs := []string{
			`"method":"resources/list"`, `"method":"resources/templates/list"`,
			`"method":"resources/read","params":{"uri":"toolenv://collections/demo"}`,
			`"method":"resources/read","params":{"uri":"toolenv://tools/demo/current_weather"}`,
			`"method":"resources/read","params":{"uri":"toolenv://tools/%zz/x"}`,
			`"method":"resources/subscribe","params":{"uri":"toolenv://collections/demo"}`,
			`"method":"resources/unsubscribe","params":{"uri":"toolenv://nope"}`,
			`"method":"resources/subscribe","params":{}`,
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, id, reqs[r.pick(len(reqs))])
	case opSetLevel:
		levels := []string{"debug", "info", "emergency", "loud", ""}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"logging/setLevel","params":{"level":%q}}`, id, levels[r.pick(len(levels))])
	case opUndeclared:
		reqs := []string{`"method":"prompts/list"`, `"method":"prompts/get","params":{"name":"x"}`,
			`"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":"b"}}`,
			`"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
			`"method":"subscriptions/listen","params":{}`}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, id, reqs[r.pick(len(reqs))])
	case opSearch:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"weather","limit":%d}}}`, id, r.pick(60))
	case opDupID:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, lastID)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id)
}

// playHTTP plays a sequence against /mcp.
func playHTTP(t testing.TB, c *rawHTTP, seq []byte) {
	r := &seqReader{b: seq}
	session, version := "", ""
	var opened []string
	id := 0
	for n := 0; n < 48 && !r.done(); n++ {
		op := r.pick(mcpOpCount)
		id++
		var a rawAnswer
		var err error
		hdr := map[string]string{}
		if version != "" && r.pick(4) > 0 {
			hdr["Mcp-Protocol-Version"] = version
		}
		switch op {
		case opDelete:
			a, err = c.try(http.MethodDelete, session, "", nil)
		case opGet:
			if r.pick(2) == 0 {
				hdr["Last-Event-ID"] = fmt.Sprintf("%d_%d", r.pick(5), r.pick(5))
			}
			a, err = c.getBriefly(session, hdr)
		case opNewSession:
			session = ""
			continue
		case opForeignSession:
			a, err = c.try(http.MethodPost, "F"+strings.Repeat("0", r.pick(40)), mcpMessage(r, opPing, id, id-1), hdr)
		case opBatch:
			k := 1 + r.pick(4)
			parts := make([]string, k)
			for i := range parts {
				parts[i] = mcpMessage(r, r.pick(opBatch), id, id-1)
				id++
			}
			a, err = c.try(http.MethodPost, session, "["+strings.Join(parts, ",")+"]", hdr)
		default:
			a, err = c.try(http.MethodPost, session, mcpMessage(r, op, id, id-1), hdr)
		}
		if err != nil {
			t.Fatalf("move %d (op %d): %v", n, op, err)
		}
		if a.status >= 500 {
			t.Fatalf("move %d (op %d): HTTP %d: %s", n, op, a.status, a.body)
		}
		for _, m := range a.msgs {
			if err := validJSONRPC(m); err != nil {
				t.Fatalf("move %d (op %d): HTTP %d: %v", n, op, a.status, err)
			}
		}
		if a.status >= 400 && len(a.msgs) == 0 && op != opGet {
			t.Fatalf("move %d (op %d): HTTP %d without a JSON-RPC error: %s", n, op, a.status, a.body)
		}
		if sid := a.header.Get(mcpSessionHeader); sid != "" && sid != session {
			session = sid
			opened = append(opened, sid)
			for _, m := range a.msgs {
				var init struct {
					Result struct {
						ProtocolVersion string `json:"protocolVersion"`
					} `json:"result"`
				}
				if json.Unmarshal(m, &init) == nil && init.Result.ProtocolVersion != "" {
					version = init.Result.ProtocolVersion
				}
			}
		}
	}
	for _, sid := range opened {
		c.try(http.MethodDelete, sid, "", nil)
	}
}

// getBriefly opens a GET stream and closes it once the answer's header
// is in (a stream the server keeps open is a success).
func (c *rawHTTP) getBriefly(session string, hdr map[string]string) (rawAnswer, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return rawAnswer{}, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if session != "" {
		req.Header.Set(mcpSessionHeader, session)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return rawAnswer{}, err
	}
	defer resp.Body.Close()
	a := rawAnswer{status: resp.StatusCode, header: resp.Header}
	if resp.StatusCode >= 300 {
		b := make([]byte, 64<<10)
		n, _ := resp.Body.Read(b)
		a.body = b[:n]
		a.msgs, err = splitMessages(resp.Header.Get("Content-Type"), a.body)
	}
	return a, err
}

// playStdio plays a sequence over stdio; after every move the session
// must still answer a ping.
func playStdio(t testing.TB, fx *mcpFixture, seq []byte) {
	s := serveRawStdio(t, func(ctx context.Context, tr *MCPStdioTransport) error { return fx.server.Run(ctx, tr) })
	r := &seqReader{b: seq}
	id := 0
	for n := 0; n < 48 && !r.done(); n++ {
		op := r.pick(mcpOpCount)
		id++
		switch op {
		case opDelete, opGet, opNewSession, opForeignSession:
			continue // HTTP moves
		case opBatch:
			k := 1 + r.pick(4)
			parts := make([]string, k)
			for i := range parts {
				parts[i] = mcpMessage(r, r.pick(opBatch), id, id-1)
				id++
			}
			s.send(t, "["+strings.Join(parts, ",")+"]")
		default:
			s.send(t, mcpMessage(r, op, id, id-1))
		}
		sync := fmt.Sprintf(`"sync-%d"`, n)
		s.send(t, `{"jsonrpc":"2.0","id":`+sync+`,"method":"ping"}`)
		for answered := false; !answered; {
			line := s.next(t)
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(line, &m) == nil && string(m.ID) == sync {
				answered = true
			}
		}
	}
	if bad := s.invalid(); len(bad) > 0 {
		t.Fatalf("invalid JSON-RPC over stdio: %v", bad)
	}
}

// mcpFuzzTarget is one fixture and HTTP server shared by the fuzz
// iterations of a process.
type mcpFuzzTarget struct {
	fx *mcpFixture
	c  *rawHTTP
}

func (ft *mcpFuzzTarget) play(t *testing.T, seq []byte) {
	t.Helper()
	playHTTP(t, ft.c, seq)
	playStdio(t, ft.fx, seq)
}

func newMCPFuzzTarget(t testing.TB) *mcpFuzzTarget {
	fx := newMCPFixtureWith(t, MCPOptions{SearchAbove: 3, PageSize: 4})
	hs := fx.httpServer(t)
	return &mcpFuzzTarget{fx: fx, c: newRawHTTP(hs.URL)}
}

// mcpSeeds are sequences worth keeping: the two that killed the process,
// and the lifecycle's corners.
var mcpSeeds = [][]byte{
	{opBatch, 1, opInit, 0, opInit, 0, opPing},                                   // a batch of two initialize
	{opInit, 0, opInitialized, opInit, 0, opPing, opCall, 0, 0, 0},               // initialize resent on its session
	{opList, 0, opCall, 0, 0, 0, opInit, 1, opCall, 0, 0, 0},                     // calls before initialize
	{opInit, 2, opBatch, 3, opPing, opInitialized, opCancel, 0, opCall, 1, 2, 1}, // batches in 2025-03-26
	{opInit, 0, opCall, 0, 0, 0, opCancel, 0, opDelete, opPing, opGet},           // DELETE, then the stale session
	{opInit, 0, opGet, 1, 3, 4, opGet, 0, opMalformed, 0, opMalformed, 17},       // resumed streams, bad JSON
	{opInit, 4, opUndeclared, 3, opUndeclared, 0, opResources, 5, opSetLevel, 3}, // 2026-07-28, undeclared methods
	{opInit, 0, opDupID, opBatch, 2, opDupID, opDupID, opForeignSession, 3},      // ids used twice
}

// FuzzMCPSequence plays byte strings as MCP sequences over both
// transports (go test -fuzz FuzzMCPSequence ./server).
func FuzzMCPSequence(f *testing.F) {
	for _, s := range mcpSeeds {
		f.Add(s)
	}
	ft := newMCPFuzzTarget(f)
	f.Fuzz(func(t *testing.T, seq []byte) { ft.play(t, seq) })
}

// TestMCPRandomSequences plays seeded random sequences over both
// transports (the same moves as FuzzMCPSequence, in the normal suite).
func TestMCPRandomSequences(t *testing.T) {
	ft := newMCPFuzzTarget(t)
	n := 60
	if testing.Short() {
		n = 15
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		rng := rand.New(rand.NewPCG(seed, 20))
		seq := make([]byte, 8+rng.IntN(120))
		for i := range seq {
			seq[i] = byte(rng.UintN(256))
		}
		t.Run(fmt.Sprint("seed-", seed), func(t *testing.T) { ft.play(t, seq) })
	}
	for i, s := range mcpSeeds {
		t.Run(fmt.Sprint("kept-", i), func(t *testing.T) { ft.play(t, s) })
	}
}
