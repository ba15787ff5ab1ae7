package probe

import (
	"fmt"
	"io"

	"github.com/toolenv/toolenv/llm"
)

// Summary counts what a probe run produced.
type Summary struct {
	Queries     int       `json:"queries"`
	Errors      int       `json:"errors"`
	Initial     int       `json:"initial_mappings"`
	Reflected   int       `json:"reflected_mappings"`
	Repaired    int       `json:"repaired_answers"`
	Failed      int       `json:"failed_answers"`
	Calls       int       `json:"model_calls"`
	Usage       llm.Usage `json:"usage"`
	Dropped     int       `json:"dropped_parts"`
	FirstErrors []string  `json:"first_errors,omitempty"`
}

// Summarise counts the results of a probe run.
func Summarise(rs []*Result) Summary {
	var s Summary
	for _, r := range rs {
		s.Queries++
		if r.Error != "" {
			s.Errors++
			if len(s.FirstErrors) < 5 {
				s.FirstErrors = append(s.FirstErrors, r.Query.ID+": "+r.Error)
			}
		}
		s.Initial += len(r.Initial)
		s.Reflected += len(r.Reflected)
		s.Repaired += r.Repaired
		s.Failed += len(r.Failures)
		s.Calls += r.Calls
		s.Usage.PromptTokens += r.Usage.PromptTokens
		s.Usage.CompletionTokens += r.Usage.CompletionTokens
		s.Usage.TotalTokens += r.Usage.TotalTokens
		s.Dropped += len(r.Notes)
	}
	return s
}

// Markdown writes the summary, saying the probe file was written to out.
func (s Summary) Markdown(w io.Writer, out string) {
	fmt.Fprintf(w, "# Probe\n\n")
	fmt.Fprintf(w, "- queries: %d (%d could not be probed)\n", s.Queries, s.Errors)
	fmt.Fprintf(w, "- mappings: %d first answers, %d after self-reflection\n", s.Initial, s.Reflected)
	fmt.Fprintf(w, "- answers repaired: %d; unreadable (recorded as failed): %d; parts dropped (unknown APIs or fields): %d\n", s.Repaired, s.Failed, s.Dropped)
	fmt.Fprintf(w, "- model calls: %d, tokens: %d prompt + %d completion\n", s.Calls, s.Usage.PromptTokens, s.Usage.CompletionTokens)
	for _, e := range s.FirstErrors {
		fmt.Fprintf(w, "- error: %s\n", e)
	}
	fmt.Fprintf(w, "- written to %s; review with: toolenv map review --probe %s\n", out, out)
}
