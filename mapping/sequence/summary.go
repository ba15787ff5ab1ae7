package sequence

import (
	"context"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/llm"
)

// Summary averages outcomes (each F1 averaged per task, as the paper's
// Table 2 reports).
type Summary struct {
	Tasks  int `json:"tasks"`
	Errors int `json:"errors"`
	// RetrievalRecall is the mean share of gold APIs among the
	// candidates (recall@K).
	RetrievalRecall float64     `json:"retrieval_recall"`
	Set             metrics.PRF `json:"set"`
	Order           metrics.PRF `json:"order"`
	SetReflected    metrics.PRF `json:"set_reflected"`
	OrderReflected  metrics.PRF `json:"order_reflected"`
	Usage           llm.Usage   `json:"usage"`
}

// Summarise averages outcomes; outcomes with an error count as zero
// scores (a failed query is a failed sequence).
func Summarise(outs []*Outcome) Summary {
	s := Summary{Tasks: len(outs)}
	var set, order, setR, orderR []metrics.PRF
	var rec float64
	for _, o := range outs {
		if o.Error != "" {
			s.Errors++
		}
		rec += o.RetrievalRecall
		set, order = append(set, o.Set), append(order, o.Order)
		setR, orderR = append(setR, o.SetReflected), append(orderR, o.OrderReflected)
		s.Usage.PromptTokens += o.Usage.PromptTokens
		s.Usage.CompletionTokens += o.Usage.CompletionTokens
		s.Usage.TotalTokens += o.Usage.TotalTokens
	}
	if len(outs) > 0 {
		s.RetrievalRecall = rec / float64(len(outs))
	}
	s.Set, s.Order = metrics.MeanPRF(set), metrics.MeanPRF(order)
	s.SetReflected, s.OrderReflected = metrics.MeanPRF(setR), metrics.MeanPRF(orderR)
	return s
}

// Baseline sequences with retrieval alone: the top |gold| retrieved tools,
// in rank order, are the sequence. It measures what a model starts from.
func Baseline(ctx context.Context, retr Retriever, tasks []*toolenv.Task, k int) []*Outcome {
	if k <= 0 {
		k = 10
	}
	var outs []*Outcome
	for _, t := range tasks {
		if ctx.Err() != nil {
			break
		}
		o := &Outcome{TaskID: t.ID, Query: t.Query, Gold: Gold(t)}
		tools, err := retr.Retrieve(ctx, t.Query, k)
		if err != nil {
			o.Error = "retrieval: " + err.Error()
			outs = append(outs, o)
			continue
		}
		for _, tl := range tools {
			o.Candidates = append(o.Candidates, tl.Name)
		}
		o.RetrievalRecall = recall(o.Gold, o.Candidates)
		n := min(len(o.Gold), len(o.Candidates))
		o.Initial = append([]string(nil), o.Candidates[:n]...)
		o.Set, o.Order = metrics.SetPRF(o.Gold, o.Initial), metrics.OrderPRF(o.Gold, o.Initial)
		o.SetReflected, o.OrderReflected = o.Set, o.Order
		outs = append(outs, o)
	}
	return outs
}
