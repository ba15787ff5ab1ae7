package doctest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Command is one command line of a shell block: the physical lines it
// spans (continuations with \ and quoted newlines joined).
type Command struct {
	// First and Last index the block's lines the command spans.
	First, Last int
	// Text is the command as written, its lines joined with newlines.
	Text string
	// Words are the command's words, quotes removed, up to a comment.
	Words []string
	// Background is set when the command ends in " &" (before a comment).
	Background bool
	// amp is the byte offset of the trailing & in the last line.
	amp int
}

// Commands splits a shell block into its commands. It follows quotes
// across lines, backslash continuations and comments; it does not follow
// here-documents.
func Commands(lines []string) []Command {
	var (
		out   []Command
		cur   *Command
		quote byte
		words []string
		word  strings.Builder
		inW   bool
	)
	flush := func() {
		if inW {
			words = append(words, word.String())
			word.Reset()
			inW = false
		}
	}
	for i, line := range lines {
		if cur == nil {
			if quote == 0 && strings.TrimSpace(line) == "" {
				continue
			}
			cur = &Command{First: i, amp: -1}
			words = nil
		}
		cur.Last = i
		lastAmp := -1
		comment := false
		cont := false
		for j := 0; j < len(line); j++ {
			c := line[j]
			switch {
			case quote == '\'':
				if c == '\'' {
					quote = 0
				} else {
					word.WriteByte(c)
				}
				continue
			case quote == '"':
				if c == '\\' && j+1 < len(line) {
					j++
					word.WriteByte(line[j])
				} else if c == '"' {
					quote = 0
				} else {
					word.WriteByte(c)
				}
				continue
			}
			switch c {
			case '\\':
				if j == len(line)-1 {
					cont = true
				} else {
					j++
					word.WriteByte(line[j])
					inW = true
				}
			case '\'', '"':
				quote = c
				inW = true
			case ' ', '\t':
				flush()
			case '#':
				if !inW {
					comment = true
				} else {
					word.WriteByte(c)
				}
			case '&':
				if j > 0 && line[j-1] == '>' || j+1 < len(line) && line[j+1] == '>' { // >&2, &>file
					word.WriteByte(c)
					inW = true
					continue
				}
				flush()
				if j+1 < len(line) && line[j+1] == '&' {
					words = append(words, "&&")
					j++
					lastAmp = -1
					continue
				}
				words = append(words, "&")
				lastAmp = j
				continue
			case ';', '|':
				flush()
				words = append(words, string(c))
			default:
				word.WriteByte(c)
				inW = true
			}
			if comment {
				break
			}
			if c != ' ' && c != '\t' {
				lastAmp = -1
			}
		}
		if quote != 0 {
			word.WriteByte('\n')
			continue
		}
		if cont {
			continue
		}
		flush()
		cur.Words = words
		cur.Text = strings.Join(lines[cur.First:cur.Last+1], "\n")
		if lastAmp >= 0 {
			cur.Background = true
			cur.amp = lastAmp
		}
		out = append(out, *cur)
		cur = nil
	}
	if cur != nil {
		flush()
		cur.Words = words
		cur.Text = strings.Join(lines[cur.First:], "\n")
		out = append(out, *cur)
	}
	return out
}

// Server is a server a command starts, where the doc test waits for it.
type Server struct {
	// Kind is "serve" or "map review".
	Kind string
	// Addr is the host:port it listens on.
	Addr string
	// Help is set when the command starts no server after all: it asks
	// for help, or only exports (map review --export).
	Help bool
}

// defaultAddrs are the addresses of toolenv's servers without --addr.
var defaultAddrs = map[string]string{
	"serve":      "127.0.0.1:8080",
	"map review": "127.0.0.1:8088",
}

// ServerOf reports whether a command starts a toolenv server, and where.
// dir resolves a --config file's path.
func ServerOf(c Command, dir string) (Server, bool) {
	w := c.Words
	atStart := true // at a command's first word
	for i := 0; i < len(w); i++ {
		x := w[i]
		start := atStart
		atStart = x == "&" || x == "&&" || x == ";" || x == "|" || x == "||"
		if start && assignment.MatchString(x) {
			atStart = true
			continue
		}
		isTool := start && filepath.Base(x) == "toolenv"
		if start && x == "go" && i+2 < len(w) && w[i+1] == "run" && strings.HasSuffix(w[i+2], "cmd/toolenv") {
			i += 2
			isTool = true
		}
		if !isTool {
			continue
		}
		rest := w[i+1:]
		// the command's words end at a separator
		for j, x := range rest {
			if x == "&" || x == "&&" || x == ";" || x == "|" {
				rest = rest[:j]
				break
			}
		}
		var sub []string
		for j := 0; j < len(rest); j++ {
			x := rest[j]
			if x == "--log-level" { // the global flags
				j++
				continue
			}
			if strings.HasPrefix(x, "--log-") {
				continue
			}
			if strings.HasPrefix(x, "-") {
				break
			}
			sub = append(sub, x)
		}
		kind := ""
		switch {
		case len(sub) >= 1 && sub[0] == "serve":
			kind = "serve"
		case len(sub) >= 2 && sub[0] == "map" && sub[1] == "review":
			kind = "map review"
		default:
			continue
		}
		s := Server{Kind: kind, Addr: defaultAddrs[kind]}
		config := ""
		addr := ""
		for j := 0; j < len(rest); j++ {
			x := rest[j]
			switch {
			case x == "--help" || x == "-h":
				s.Help = true
			case kind == "map review" && (x == "--export" || x == "--export-set" || strings.HasPrefix(x, "--export=") || strings.HasPrefix(x, "--export-set=")):
				s.Help = true // writes what was reviewed and exits: no server
			case x == "--addr" && j+1 < len(rest):
				addr = rest[j+1]
			case strings.HasPrefix(x, "--addr="):
				addr = strings.TrimPrefix(x, "--addr=")
			case x == "--config" && j+1 < len(rest):
				config = rest[j+1]
			case strings.HasPrefix(x, "--config="):
				config = strings.TrimPrefix(x, "--config=")
			}
		}
		if addr == "" && config != "" {
			if !filepath.IsAbs(config) {
				config = filepath.Join(dir, config)
			}
			addr = configAddr(config)
		}
		if addr != "" {
			s.Addr = addr
		}
		s.Addr = dialAddr(s.Addr)
		return s, true
	}
	return Server{}, false
}

var (
	assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	yamlAddr   = regexp.MustCompile(`(?m)^addr:\s*["']?([^"'\s#]+)`)
	jsonAddr   = regexp.MustCompile(`"addr"\s*:\s*"([^"]+)"`)
)

// configAddr reads the top-level addr of a YAML or JSON config file, ""
// when it has none or cannot be read.
func configAddr(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if m := yamlAddr.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	if m := jsonAddr.FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}

// dialAddr turns a listening address into one to dial: ":8080" and
// "0.0.0.0:8080" become "127.0.0.1:8080".
func dialAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	switch host {
	case "", "0.0.0.0", "::", "[::]", "localhost":
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// script is a block turned into the bash script that runs it.
type script struct {
	text    string
	servers []startedServer
}

type startedServer struct {
	Server
	line int // the document line of the command
}

// headerLines is how many lines the script puts before the block's first
// line, so that bash's $LINENO maps back to the document.
const headerLines = 1

// buildScript turns a block into its script: one header line sourcing
// the harness's functions, then the block's lines as written, with the
// wait for each background server appended after its " &". held are the
// servers the file started in earlier blocks, still running; dir is the
// block's working folder.
func buildScript(b Block, lib string, held []startedServer, dir string) (script, error) {
	lines := append([]string(nil), b.Lines...)
	var s script
	taken := map[string]startedServer{}
	for _, h := range held {
		taken[h.Addr] = h
	}
	for _, c := range Commands(b.Lines) {
		if err := unbounded(c); err != nil {
			return script{}, fmt.Errorf("%s:%d: %v", b.File, b.LineOf(c.First), err)
		}
		srv, ok := ServerOf(c, dir)
		if !ok || srv.Help {
			continue
		}
		line := b.LineOf(c.Last)
		if !c.Background {
			return script{}, fmt.Errorf("%s:%d: `toolenv %s` runs in the foreground and never returns: end the line with \" &\" (the test waits for it and stops it at the end of the file), or fence the block ```sh illustrative", b.File, line, srv.Kind)
		}
		if h, ok := taken[srv.Addr]; ok {
			return script{}, fmt.Errorf("%s:%d: a second server on %s, which the server started at %s:%d still holds: give this one another --addr", b.File, line, srv.Addr, b.File, h.line)
		}
		st := startedServer{Server: srv, line: line}
		taken[srv.Addr] = st
		s.servers = append(s.servers, st)
		l := lines[c.Last]
		lines[c.Last] = l[:c.amp+1] + fmt.Sprintf(" __doctest_wait $! %s %d;", srv.Addr, line) + l[c.amp+1:]
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "source %s\n", shellQuote(lib))
	for _, l := range lines {
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
	s.text = sb.String()
	return s, nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// unbounded refuses a command that would run until stopped: go test
// -fuzz without -fuzztime.
func unbounded(c Command) error {
	fuzz, fuzztime, goTest := false, false, false
	for i, w := range c.Words {
		if w == "go" && i+1 < len(c.Words) && c.Words[i+1] == "test" {
			goTest = true
		}
		switch {
		case w == "-fuzz" || strings.HasPrefix(w, "-fuzz=") || w == "--fuzz" || strings.HasPrefix(w, "--fuzz="):
			fuzz = true
		case w == "-fuzztime" || strings.HasPrefix(w, "-fuzztime=") || w == "--fuzztime" || strings.HasPrefix(w, "--fuzztime="):
			fuzztime = true
		}
	}
	if goTest && fuzz && !fuzztime {
		return fmt.Errorf("`go test -fuzz` without -fuzztime runs until it is stopped: give it one (e.g. -fuzztime 10s)")
	}
	return nil
}
