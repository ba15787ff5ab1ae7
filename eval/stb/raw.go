package stb

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// RawAnswer is one answer file of StableToolBench's inference.
type RawAnswer struct {
	Win bool `json:"win"`
	// TryCount and Trys hold a CoT run's chains, one per try.
	TryCount int   `json:"try_count,omitempty"`
	Trys     []Try `json:"trys,omitempty"`
	// Tree holds a DFS run's search tree.
	Tree              *Tree            `json:"tree,omitempty"`
	CompareCandidates json.RawMessage  `json:"compare_candidates,omitempty"`
	ForwardArgs       map[string]any   `json:"forward_args,omitempty"`
	AnswerGeneration  AnswerGeneration `json:"answer_generation"`
}

// Try is one chain of a CoT run.
type Try struct {
	Chain []*Node `json:"chain"`
	Win   bool    `json:"win"`
}

// Tree is a DFS run's search tree.
type Tree struct {
	Size      int   `json:"size"`
	MaxLength int   `json:"max_length"`
	Tree      *Node `json:"tree"`
}

// Node is a node of a chain or tree: a Thought, an Action (the function
// name) or an Action Input (the arguments, with the observation).
type Node struct {
	IsTerminal      bool            `json:"is_terminal"`
	Pruned          bool            `json:"pruned"`
	Finished        bool            `json:"finished"`
	Depth           int             `json:"depth"`
	NodeType        string          `json:"node_type"`
	Description     string          `json:"description"`
	Elo             float64         `json:"Elo"`
	Observation     *string         `json:"observation,omitempty"`
	ObservationCode *int            `json:"observation_code,omitempty"`
	ChildCount      int             `json:"child_count"`
	ExpandNum       int             `json:"expand_num"`
	IOState         json.RawMessage `json:"io_state,omitempty"`
	Children        []*Node         `json:"children,omitempty"`
}

// AnswerGeneration is the answer and conversation of a run.
type AnswerGeneration struct {
	ValidData   bool   `json:"valid_data"`
	FinalAnswer string `json:"final_answer"`
	// Function lists the functions offered, as OpenAI function JSON.
	Function    []json.RawMessage `json:"function"`
	QueryCount  int               `json:"query_count"`
	TotalTokens int               `json:"total_tokens"`
	// TrainMessages are the conversations at each step; the last one is
	// the successful chain.
	TrainMessages [][]Message     `json:"train_messages"`
	Chain         json.RawMessage `json:"chain,omitempty"`
	Query         string          `json:"query"`
}

// Message is one message of a conversation, in the legacy OpenAI
// function-calling format (function_call) or the tools format
// (tool_calls).
type Message struct {
	Role         string        `json:"role"`
	Content      *string       `json:"content,omitempty"`
	Name         string        `json:"name,omitempty"`
	FunctionCall *FunctionCall `json:"function_call,omitempty"`
	ToolCalls    []ToolCall    `json:"tool_calls,omitempty"`
	ToolCallID   string        `json:"tool_call_id,omitempty"`
}

// FunctionCall is a legacy function call.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolCall is a tools-format call.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type,omitempty"`
	Function FunctionCall `json:"function"`
}

// Text returns the message's content, "" when it has none.
func (m Message) Text() string {
	if m.Content == nil {
		return ""
	}
	return *m.Content
}

// ReadRawAnswer reads one raw answer file.
func ReadRawAnswer(path string) (*RawAnswer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read StableToolBench answer: %w", err)
	}
	var a RawAnswer
	if err := toolenv.DecodeJSON(data, &a); err != nil {
		return nil, fmt.Errorf("read StableToolBench answer %s: %w (is it an answer file from StableToolBench's inference?)", path, err)
	}
	return &a, nil
}

// RawAnswerFile is a raw answer with the query id and method its file name
// gives ("588_DFS_woFilter_w2.json" is query 588, method DFS_woFilter_w2).
type RawAnswerFile struct {
	QueryID string
	Method  string
	Path    string
	Answer  *RawAnswer
}

// ReadRawAnswers reads the raw answers in dir whose file names hold
// method (all when method is ""), sorted by file name. A file that does
// not parse is reported in problems and skipped.
func ReadRawAnswers(dir, method string) (files []RawAnswerFile, problems []error, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read StableToolBench answers: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".json") || method != "" && !strings.Contains(name, method) {
			continue
		}
		qid, m, _ := strings.Cut(strings.TrimSuffix(name, ".json"), "_")
		path := filepath.Join(dir, name)
		a, err := ReadRawAnswer(path)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		files = append(files, RawAnswerFile{QueryID: qid, Method: m, Path: path, Answer: a})
	}
	return files, problems, nil
}
