package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMCPMaxLine is the longest message MCPStdioTransport reads unless
// told otherwise: the go-sdk's own bound.
const DefaultMCPMaxLine = mcp.DefaultMaxLineLength

// MCPStdioTransport is MCP's stdio transport (one JSON-RPC message, or a
// batch, per line) for an MCP server, made so that no input ends the
// session: where the go-sdk's IOTransport closes the connection on a line
// that is not JSON, or on a batch it cannot track, this one answers the
// line with a JSON-RPC error and reads on.
//
//   - A line that is not JSON is answered with -32700 (parse error), one
//     that is JSON but not a JSON-RPC 2.0 message with -32600, one longer
//     than MaxLineBytes with -32600; blank lines are skipped.
//   - A batch (an array of messages) is accepted while the negotiated
//     protocol is older than 2025-06-18 (which removed batches) and
//     answered with one array of the answers of its requests; an element
//     that is not a message is answered in that array with -32600, a
//     request id used twice with -32600. From 2025-06-18 on a batch is
//     answered with -32600.
//   - An error the SDK answers without a JSON-RPC code (a request before
//     initialize) gets -32600.
//   - The end of the input does not drop a request in flight: the
//     session ends once every request read has been answered. A request
//     the server itself sent the client and that is still unanswered
//     (sampling, elicitation, roots) is answered with an error then, as
//     the client can no longer answer it.
//
// The server of NewMCPServer answers everything else with standard codes
// (see its documentation). Serve it with (*mcp.Server).Run.
type MCPStdioTransport struct {
	// Reader is the client's output (stdin); it is closed when the
	// session ends.
	Reader io.ReadCloser
	// Writer is the client's input (stdout); it is never closed.
	Writer io.Writer
	// MaxLineBytes bounds one line: 0 means DefaultMCPMaxLine.
	MaxLineBytes int
}

// Connect implements mcp.Transport.
func (t *MCPStdioTransport) Connect(context.Context) (mcp.Connection, error) {
	if t.Reader == nil || t.Writer == nil {
		return nil, errors.New("mcp stdio transport: Reader and Writer are required")
	}
	max := t.MaxLineBytes
	if max <= 0 {
		max = DefaultMCPMaxLine
	}
	c := &stdioConn{
		in: t.Reader, out: t.Writer, max: max,
		lines:   make(chan lineOrErr),
		closed:  make(chan struct{}),
		batches: map[jsonrpc.ID]*stdioBatch{},
		inits:   map[jsonrpc.ID]bool{},
	}
	go c.readLines()
	return c, nil
}

type lineOrErr struct {
	line []byte
	long bool // longer than max: line holds its start only
	err  error
}

// stdioConn is the connection of MCPStdioTransport.
type stdioConn struct {
	in  io.ReadCloser
	out io.Writer
	max int

	lines     chan lineOrErr
	closed    chan struct{}
	closeOnce sync.Once

	queue []jsonrpc.Message // the rest of a batch; Read is called by one goroutine

	// flight counts the requests read and not yet answered, and the
	// requests the server sent and the client has not answered, so that
	// the end of the input waits for the answers still to come.
	flight stdioFlight

	wmu sync.Mutex // one write at a time

	mu      sync.Mutex
	version string                     // negotiated protocol version, from initialize's answer
	inits   map[jsonrpc.ID]bool        // initialize requests not yet answered
	batches map[jsonrpc.ID]*stdioBatch // by request id: the batch awaiting its answer
}

// stdioBatch collects the answers of a batch's requests.
type stdioBatch struct {
	pending int
	answers []json.RawMessage // in request order; errors for bad elements come first
	index   map[jsonrpc.ID]int
}

// readLines reads the input line by line until it ends or the connection
// closes.
func (c *stdioConn) readLines() {
	r := bufio.NewReaderSize(c.in, 64<<10)
	for {
		item := c.readLine(r)
		select {
		case c.lines <- item:
		case <-c.closed:
			return
		}
		if item.err != nil {
			return
		}
	}
}

// readLine reads one line, keeping at most max bytes of it.
func (c *stdioConn) readLine(r *bufio.Reader) lineOrErr {
	var line []byte
	long := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !long {
			if len(line)+len(chunk) > c.max+1 { // +1: the newline
				long = true
				line = append(line, chunk[:min(len(chunk), 256)]...)
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == nil:
			return lineOrErr{line: line, long: long}
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case len(line) > 0 && errors.Is(err, io.EOF):
			return lineOrErr{line: line, long: long} // a last line without newline
		default:
			return lineOrErr{err: err}
		}
	}
}

// Read implements mcp.Connection: the next valid message. Lines that hold
// none are answered here. At the end of the input it returns the error
// only once every request read has been answered (see stdioFlight).
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.read(ctx)
	if err == nil {
		c.flight.read(msg)
		return msg, nil
	}
	if orphan := c.flight.drain(ctx, c.closed); orphan != nil {
		return orphan, nil
	}
	return nil, err
}

// read is Read before the accounting of requests in flight.
func (c *stdioConn) read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if len(c.queue) > 0 {
			msg := c.queue[0]
			c.queue = c.queue[1:]
			return msg, nil
		}
		var item lineOrErr
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case item = <-c.lines:
		}
		if item.err != nil {
			return nil, item.err
		}
		if item.long {
			c.writeError(jsonrpc.ID{}, mcpCodeInvalidRequest, fmt.Sprintf("message longer than %d bytes; send smaller messages", c.max))
			continue
		}
		line := bytes.TrimSpace(item.line)
		if len(line) == 0 {
			continue
		}
		if line[0] == '[' {
			c.readBatch(line)
			continue
		}
		msg, id, code, why := decodeMCPMessage(line)
		if msg == nil {
			c.writeError(id, code, why)
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			if err := mcpCheckParams(req); err != nil {
				c.writeError(req.ID, int(err.Code), err.Message)
				continue
			}
		}
		c.note(msg)
		return msg, nil
	}
}

// note remembers the initialize requests, whose answers name the
// negotiated protocol version. Until the answer is written the version
// is the one the request will negotiate, so that a batch a client sends
// right behind its initialize meets the same rule whenever it is read.
func (c *stdioConn) note(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "initialize" || !req.IsCall() {
		return
	}
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	json.Unmarshal(req.Params, &p)
	c.mu.Lock()
	c.inits[req.ID] = true
	if c.version == "" {
		c.version = mcpNegotiated(p.ProtocolVersion)
	}
	c.mu.Unlock()
}

// mcpNegotiated is the version an initialize asking for v negotiates
// (see the SDK's negotiation): v when the SDK speaks it through
// initialize, else the newest it does.
func mcpNegotiated(v string) string {
	for _, s := range mcp.SupportedProtocolVersions() {
		if s == v && v < "2026-07-28" {
			return v
		}
	}
	return "2025-11-25"
}

// readBatch queues the messages of a batch, or answers it when it cannot
// be served.
func (c *stdioConn) readBatch(line []byte) {
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		c.writeError(jsonrpc.ID{}, mcpCodeParse, "parse error: the line is not JSON: "+err.Error())
		return
	}
	c.mu.Lock()
	version := c.version
	c.mu.Unlock()
	switch {
	case len(raws) == 0:
		c.writeError(jsonrpc.ID{}, mcpCodeInvalidRequest, "an empty batch: send at least one message")
		return
	case version >= "2025-06-18":
		c.writeError(jsonrpc.ID{}, mcpCodeInvalidRequest, fmt.Sprintf("JSON-RPC batches are not part of MCP since 2025-06-18 (this session speaks %s): send one message per line", version))
		return
	}
	b := &stdioBatch{index: map[jsonrpc.ID]int{}}
	var msgs []jsonrpc.Message
	var calls []jsonrpc.ID
	c.mu.Lock()
	for _, raw := range raws {
		msg, id, code, why := decodeMCPMessage(raw)
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			if err := mcpCheckParams(req); err != nil {
				msg, id, code, why = nil, req.ID, int(err.Code), err.Message
			}
		}
		if msg != nil {
			if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
				if _, dup := b.index[req.ID]; dup || c.batches[req.ID] != nil {
					msg, id, code, why = nil, req.ID, mcpCodeInvalidRequest, fmt.Sprintf("request id %v is already in use: give each request of a session its own id", req.ID.Raw())
				} else {
					b.index[req.ID] = -1 // placed below
					calls = append(calls, req.ID)
				}
			}
		}
		if msg == nil {
			b.answers = append(b.answers, mcpErrorJSON(id, code, why))
			continue
		}
		msgs = append(msgs, msg)
	}
	for _, id := range calls {
		b.index[id] = len(b.answers)
		b.answers = append(b.answers, nil)
		c.batches[id] = b
		b.pending++
	}
	c.mu.Unlock()
	for _, m := range msgs {
		c.note(m)
	}
	if b.pending == 0 && len(b.answers) > 0 {
		c.writeBatch(b.answers)
	}
	c.queue = append(c.queue, msgs...)
}

// decodeMCPMessage decodes one JSON-RPC message, or says what is wrong
// with it: the id to answer (when it can be read), the code, why.
func decodeMCPMessage(raw []byte) (msg jsonrpc.Message, id jsonrpc.ID, code int, why string) {
	msg, err := jsonrpc.DecodeMessage(raw)
	if err == nil {
		return msg, jsonrpc.ID{}, 0, ""
	}
	if !json.Valid(raw) {
		return nil, jsonrpc.ID{}, mcpCodeParse, "parse error: the message is not JSON"
	}
	var probe struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(raw, &probe) == nil {
		if pid, err := jsonrpc.MakeID(probe.ID); err == nil {
			id = pid
		}
	}
	return nil, id, mcpCodeInvalidRequest, "invalid request: not a JSON-RPC 2.0 message (" + err.Error() + "); send {\"jsonrpc\": \"2.0\", \"id\": …, \"method\": …, \"params\": {…}}"
}

// Write implements mcp.Connection.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	mcpNormalizeError(msg)
	c.flight.write(msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		if c.inits[resp.ID] {
			delete(c.inits, resp.ID)
			if resp.Error == nil {
				var r struct {
					ProtocolVersion string `json:"protocolVersion"`
				}
				if json.Unmarshal(resp.Result, &r) == nil && r.ProtocolVersion != "" {
					c.version = r.ProtocolVersion
				}
			}
		}
		b := c.batches[resp.ID]
		if b != nil {
			delete(c.batches, resp.ID)
			data, err := jsonrpc.EncodeMessage(resp)
			if err != nil {
				c.mu.Unlock()
				return err
			}
			b.answers[b.index[resp.ID]] = data
			b.pending--
			done := b.pending == 0
			c.mu.Unlock()
			if done {
				return c.writeBatch(b.answers)
			}
			return nil
		}
		c.mu.Unlock()
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(data)
}

func (c *stdioConn) writeBatch(answers []json.RawMessage) error {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, a := range answers {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(a)
	}
	b.WriteByte(']')
	return c.writeLine(b.Bytes())
}

// writeError answers a line that held no message the server can take.
func (c *stdioConn) writeError(id jsonrpc.ID, code int, why string) {
	c.writeLine(mcpErrorJSON(id, code, why))
}

// mcpErrorJSON is a JSON-RPC error response: with "id": null when the id
// of the message it answers could not be read (the SDK's encoder would
// leave "id" out, which JSON-RPC does not allow).
func mcpErrorJSON(id jsonrpc.ID, code int, msg string) []byte {
	if id.IsValid() {
		if data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: int64(code), Message: msg}}); err == nil {
			return data
		}
	}
	b := []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":`)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	m, _ := json.Marshal(msg)
	b = append(b, m...)
	return append(b, "}}"...)
}

func (c *stdioConn) writeLine(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	buf := make([]byte, 0, len(data)+1)
	buf = append(append(buf, data...), '\n')
	_, err := c.out.Write(buf)
	return err
}

// Close implements mcp.Connection: it closes the input.
func (c *stdioConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		err = c.in.Close()
	})
	return err
}

// SessionID implements mcp.Connection: stdio sessions have no id.
func (c *stdioConn) SessionID() string { return "" }
