package stb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	toolenv "github.com/toolenv/toolenv"
)

// Converted is one query's entry in a converted-answers file.
type Converted struct {
	Query string `json:"query"`
	// AvailableTools are the functions offered, as OpenAI function JSON
	// (kept as written).
	AvailableTools []json.RawMessage `json:"available_tools"`
	Answer         ConvertedAnswer   `json:"answer"`
}

// ConvertedAnswer is the answer part of a converted entry.
type ConvertedAnswer struct {
	Method     string `json:"method"`
	TotalSteps int    `json:"total_steps"`
	// FinalAnswer is the Finish call's arguments as the model wrote them
	// ('{"return_type": "give_answer", "final_answer": "..."}'), or "".
	FinalAnswer   string        `json:"final_answer"`
	AnswerDetails []*DetailNode `json:"answer_details"`
}

// DetailNode is a node of the answer's execution chain: system, user,
// assistant (a thought) or tool (a call with its response). Each node has
// at most one next node in converted answers.
type DetailNode struct {
	Role string `json:"role"`
	// Message is a string for system, user and assistant nodes and a
	// *ToolMessage for tool nodes.
	Message any           `json:"message"`
	Next    []*DetailNode `json:"next"`
}

// ToolMessage is a tool node's call and response.
type ToolMessage struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Response  string `json:"response"`
}

// UnmarshalJSON reads a node whose message is a string or a call object.
func (n *DetailNode) UnmarshalJSON(data []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Message json.RawMessage `json:"message"`
		Next    []*DetailNode   `json:"next"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	n.Role, n.Next = raw.Role, raw.Next
	msg := bytes.TrimSpace(raw.Message)
	switch {
	case len(msg) == 0 || bytes.Equal(msg, []byte("null")):
		n.Message = nil
	case msg[0] == '{':
		var tm ToolMessage
		if err := json.Unmarshal(msg, &tm); err != nil {
			return fmt.Errorf("tool node message: %w", err)
		}
		n.Message = &tm
	case msg[0] == '"':
		var s string
		if err := json.Unmarshal(msg, &s); err != nil {
			return err
		}
		n.Message = s
	default:
		n.Message = string(msg)
	}
	return nil
}

// Chain returns the nodes of the answer's chain in order, following the
// first next node from the first root (what get_steps walks).
func (a *ConvertedAnswer) Chain() []*DetailNode {
	if len(a.AnswerDetails) == 0 {
		return nil
	}
	var out []*DetailNode
	for n := a.AnswerDetails[0]; n != nil; {
		out = append(out, n)
		if len(n.Next) == 0 {
			break
		}
		n = n.Next[0]
	}
	return out
}

// ConvertedFile is a converted-answers file: query id to entry, in the
// order the file lists them.
type ConvertedFile struct {
	IDs     []string
	Entries map[string]*Converted
}

// ReadConverted reads a converted-answers file.
func ReadConverted(path string) (*ConvertedFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read converted answers: %w", err)
	}
	f := &ConvertedFile{Entries: map[string]*Converted{}}
	err = decodeOrderedObject(data, func(key string, d *json.Decoder) error {
		var c Converted
		if err := d.Decode(&c); err != nil {
			return fmt.Errorf("query %s: %w", key, err)
		}
		if _, dup := f.Entries[key]; !dup {
			f.IDs = append(f.IDs, key)
		}
		f.Entries[key] = &c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read converted answers %s: %w", path, err)
	}
	return f, nil
}

// WriteConverted writes entries as a converted-answers file (indent 2,
// as convert_to_answer_format.py writes it), atomically.
func WriteConverted(path string, f *ConvertedFile) error {
	var b bytes.Buffer
	b.WriteString("{")
	for i, id := range f.IDs {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  ")
		k, _ := json.Marshal(id)
		b.Write(k)
		b.WriteString(": ")
		var e bytes.Buffer
		enc := json.NewEncoder(&e)
		enc.SetEscapeHTML(false)
		enc.SetIndent("  ", "  ")
		if err := enc.Encode(f.Entries[id]); err != nil {
			return fmt.Errorf("write converted answers: query %s: %w", id, err)
		}
		b.Write(bytes.TrimRight(e.Bytes(), "\n"))
	}
	b.WriteString("\n}\n")
	return toolenv.WriteFileAtomic(path, b.Bytes())
}

// decodeOrderedObject calls fn for each member of the JSON object in data,
// in order, with the decoder positioned at the member's value.
func decodeOrderedObject(data []byte, fn func(key string, d *json.Decoder) error) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	tok, err := d.Token()
	if err != nil {
		return err
	}
	if delim, ok := tok.(json.Delim); !ok || delim != '{' {
		return fmt.Errorf("expected a JSON object keyed by query id")
	}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if err := fn(key, d); err != nil {
			return err
		}
	}
	if _, err := d.Token(); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return fmt.Errorf("unexpected data after the JSON object")
	}
	return nil
}
