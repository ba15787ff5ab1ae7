package llm

import (
	"encoding/json"

	"github.com/toolenv/toolenv/openai"
)

// Message is one chat message.
type Message struct {
	Role       string     `json:"role"` // "system", "user", "assistant", "tool"
	Content    string     `json:"content"`
	Name       string     `json:"name,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	// ReasoningContent is the reasoning some servers return beside the
	// content (DeepSeek-R1, vLLM reasoning parsers). It is never sent.
	ReasoningContent string `json:"reasoning_content,omitempty"`
}

// ToolCall is a native function call in an assistant message.
type ToolCall struct {
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its arguments as the JSON
// text the model wrote (which may not be valid JSON).
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Request is a chat-completion request.
type Request struct {
	Model    string        `json:"model"`
	Messages []Message     `json:"messages"`
	Tools    []openai.Tool `json:"tools,omitempty"`
	// ToolChoice is "auto", "none", "required" or a function selector.
	ToolChoice any `json:"tool_choice,omitempty"`
	// Temperature is sent whenever it is set, zero included.
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Stop        []string `json:"stop,omitempty"`
	// ResponseFormat is e.g. {"type":"json_object"}.
	ResponseFormat any `json:"response_format,omitempty"`
	// N is the number of choices (default 1).
	N int `json:"n,omitempty"`
}

// Response is a chat-completion response.
type Response struct {
	ID      string   `json:"id,omitempty"`
	Model   string   `json:"model,omitempty"`
	Choices []Choice `json:"choices"`
	Usage   Usage    `json:"usage"`
	// Replayed is true when the response came from the records rather
	// than the network.
	Replayed bool `json:"-"`
}

// Choice is one completion.
type Choice struct {
	Index        int     `json:"index"`
	Message      Message `json:"message"`
	FinishReason string  `json:"finish_reason,omitempty"`
}

// Usage counts tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Text returns the first choice's content, or "".
func (r *Response) Text() string {
	if r == nil || len(r.Choices) == 0 {
		return ""
	}
	return r.Choices[0].Message.Content
}

// Float returns a pointer to f, for Request.Temperature and TopP.
func Float(f float64) *float64 { return &f }

// Int returns a pointer to n, for Request.Seed.
func Int(n int64) *int64 { return &n }

type embeddingRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embeddingResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Usage Usage `json:"usage"`
}

type apiError struct {
	Error json.RawMessage `json:"error"`
}
