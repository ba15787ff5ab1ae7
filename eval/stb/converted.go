package stb

import (
	"bytes"
	"encoding/json"
	"fmt"
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
	ids, entries, err := readKeyed[Converted](path, "converted answers")
	if err != nil {
		return nil, err
	}
	return &ConvertedFile{IDs: ids, Entries: entries}, nil
}

// WriteConverted writes entries as a converted-answers file (indent 2,
// as convert_to_answer_format.py writes it), atomically.
func WriteConverted(path string, f *ConvertedFile) error {
	return writeKeyed(path, "converted answers", "  ", f.IDs, f.Entries)
}

// ConvertDir converts the raw answers of method in dir (as
// convert_to_answer_format.py does) into one converted file. Answer files
// that do not read or do not convert are left out and returned in
// problems.
func ConvertDir(dir, method string) (*ConvertedFile, []error, error) {
	files, problems, err := ReadRawAnswers(dir, method)
	if err != nil {
		return nil, nil, err
	}
	cf := &ConvertedFile{Entries: map[string]*Converted{}}
	for _, fl := range files {
		c, err := Convert(method, fl.Answer)
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: not converted: %w", fl.Path, err))
			continue
		}
		cf.IDs = append(cf.IDs, fl.QueryID)
		cf.Entries[fl.QueryID] = c
	}
	return cf, problems, nil
}
