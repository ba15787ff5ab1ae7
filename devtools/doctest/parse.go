package doctest

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Block is one fenced code block of a Markdown document.
type Block struct {
	// File is the document's name as given to Parse.
	File string
	// Line is the 1-based line of the opening fence.
	Line int
	// Lang is the first word of the fence's info string ("sh", "text", …),
	// empty for a bare fence.
	Lang string
	// Exit is the exit code an sh block must end with (0 unless exit=N).
	Exit int
	// Timeout is the block's budget when the fence sets timeout=DUR.
	Timeout time.Duration
	// Illustrative marks an sh block that is shown but not run.
	Illustrative bool
	// Lines are the block's lines, the fence's indentation removed.
	Lines []string
}

// Runs reports whether the block is a shell block the test runs.
func (b Block) Runs() bool { return b.Lang == "sh" && !b.Illustrative }

// Where names the block for messages: "README.md:42".
func (b Block) Where() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// LineOf returns the document line of the block's i-th line (from 0).
func (b Block) LineOf(i int) int { return b.Line + 1 + i }

// refusedLangs are fence languages that would hide commands from the test.
var refusedLangs = map[string]string{
	"bash":          "sh",
	"shell":         "sh",
	"console":       "sh (commands) and text (their output)",
	"zsh":           "sh",
	"shell-session": "sh (commands) and text (their output)",
}

// Parse returns the fenced code blocks of a Markdown document. It fails
// on what would let a command escape the doc test: a fence without a
// language, a shell fence spelled other than sh, an attribute of an sh
// fence it does not know, an unterminated fence.
func Parse(name string, src []byte) ([]Block, error) {
	var (
		blocks []Block
		errs   []string
		cur    *Block
		fence  string
		indent int
	)
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " \t")
		if cur != nil {
			if isClosingFence(trimmed, fence) {
				blocks = append(blocks, *cur)
				cur = nil
				continue
			}
			cur.Lines = append(cur.Lines, dropIndent(line, indent))
			continue
		}
		f, info, ok := openingFence(trimmed)
		if !ok {
			continue
		}
		b := Block{File: name, Line: n}
		if err := b.setInfo(info); err != nil {
			errs = append(errs, fmt.Sprintf("%s:%d: %v", name, n, err))
		}
		cur, fence, indent = &b, f, len(line)-len(trimmed)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if cur != nil {
		errs = append(errs, fmt.Sprintf("%s:%d: the fence opened here is never closed", name, cur.Line))
	}
	if len(errs) > 0 {
		return blocks, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return blocks, nil
}

// openingFence recognizes ``` or ~~~ (three or more) and returns the fence
// and the info string.
func openingFence(s string) (fence, info string, ok bool) {
	for _, c := range []byte{'`', '~'} {
		i := 0
		for i < len(s) && s[i] == c {
			i++
		}
		if i >= 3 {
			info = strings.TrimSpace(s[i:])
			if c == '`' && strings.Contains(info, "`") {
				return "", "", false // inline code such as ```x```
			}
			return s[:i], info, true
		}
	}
	return "", "", false
}

func isClosingFence(s, fence string) bool {
	s = strings.TrimRight(s, " \t")
	if len(s) < len(fence) || s[0] != fence[0] {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != fence[0] {
			return false
		}
	}
	return true
}

func dropIndent(line string, n int) string {
	i := 0
	for i < n && i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return line[i:]
}

// setInfo reads the fence's info string: the language, then for sh
// blocks the attributes exit=N, timeout=DUR and illustrative.
func (b *Block) setInfo(info string) error {
	words := strings.Fields(info)
	if len(words) == 0 {
		return fmt.Errorf("a fence without a language: write ```sh for commands the test runs, ```text for output, or the language (go, json, yaml, …)")
	}
	b.Lang = strings.ToLower(words[0])
	if want, ok := refusedLangs[b.Lang]; ok {
		return fmt.Errorf("a ```%s fence: write ```%s, so the doc test sees the commands", words[0], want)
	}
	if b.Lang != "sh" {
		return nil
	}
	for _, w := range words[1:] {
		key, val, hasVal := strings.Cut(w, "=")
		switch {
		case key == "illustrative" && !hasVal:
			b.Illustrative = true
		case key == "exit" && hasVal:
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || n > 255 {
				return fmt.Errorf("exit=%s: the exit code must be a number from 0 to 255", val)
			}
			b.Exit = n
		case key == "timeout" && hasVal:
			d, err := time.ParseDuration(val)
			if err != nil || d <= 0 {
				return fmt.Errorf("timeout=%s: write a duration such as 90s or 5m", val)
			}
			b.Timeout = d
		default:
			return fmt.Errorf("unknown attribute %q of an sh fence: the attributes are exit=N, timeout=DUR and illustrative", w)
		}
	}
	return nil
}
