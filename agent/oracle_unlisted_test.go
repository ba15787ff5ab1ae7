package agent

import (
	"context"
	"fmt"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// recordingSession offers a fixed list of tools and records every call's
// arguments, answering each with a small JSON body.
type recordingSession struct {
	tools []*toolenv.Tool
	calls []Call
}

func (s *recordingSession) ID() string                  { return "rec" }
func (s *recordingSession) Tools() []*toolenv.Tool      { return s.tools }
func (s *recordingSession) Close(context.Context) error { return nil }
func (s *recordingSession) Call(_ context.Context, c Call) *toolenv.Result {
	s.calls = append(s.calls, c)
	return &toolenv.Result{Status: toolenv.StatusOK, Body: []byte(`{"label":"x","values":[1,2]}`)}
}

// TestOracleLeavesReferencesOfUnlistedToolsAlone: a gold call to a tool the
// session does not list (an SEL getter of a column an aggregate made) is
// sent as written, "$label$" included, so the server that keeps the
// labelled data resolves it; a listed tool without a label argument gets
// its references resolved from earlier outputs.
func TestOracleLeavesReferencesOfUnlistedToolsAlone(t *testing.T) {
	listed := &toolenv.Tool{Name: "get_item"}
	task := &toolenv.Task{ID: "t", Gold: []toolenv.GoldCall{
		{Name: "aggregate_data_count", Args: map[string]any{"data_source": "$starting_table$"}, Label: "AGG"},
		{Name: "get_row_count", Args: map[string]any{"data_source": "$AGG$"}, Label: "COL"},
		{Name: "get_item", Args: map[string]any{"id": "$COL.values[1]$"}, Label: "ITEM"},
	}}
	s := &recordingSession{tools: []*toolenv.Tool{listed}}
	Oracle{}.Run(context.Background(), &Episode{Task: task, Session: s})
	if len(s.calls) != 3 {
		t.Fatalf("%d calls sent, want 3: %+v", len(s.calls), s.calls)
	}
	if got := s.calls[1].Args["data_source"]; got != "$AGG$" {
		t.Errorf("unlisted tool got data_source %v, want the label as written", got)
	}
	if got := fmt.Sprint(s.calls[2].Args["id"]); got != "2" {
		t.Errorf("listed tool got id %v, want 2 resolved from COL's output", got)
	}
}

// TestOracleLeavesReferencesToLabelledOutputsAlone: the output of a tool
// that takes labels is stored by the session, so a later listed tool
// that reads "$F_0$" gets the label as written, not that call's body;
// references to outputs of tools without labels still resolve.
func TestOracleLeavesReferencesToLabelledOutputsAlone(t *testing.T) {
	in := toolenv.ObjectSchema()
	in.SetProp("label", &toolenv.Schema{Type: "string"})
	filter := &toolenv.Tool{Name: "filter_data", Input: in, Meta: map[string]string{toolenv.MetaLabelArg: "label"}}
	retrieve, plain := &toolenv.Tool{Name: "retrieve_data"}, &toolenv.Tool{Name: "get_item"}
	task := &toolenv.Task{ID: "t", Gold: []toolenv.GoldCall{
		{Name: "filter_data", Args: map[string]any{"data_source": "$starting_table$"}, Label: "F_0"},
		{Name: "retrieve_data", Args: map[string]any{"data_source": "$F_0$", "first": "$F_0.values[0]$"}, Label: "R"},
		{Name: "get_item", Args: map[string]any{"id": "$R.values[1]$"}},
	}}
	s := &recordingSession{tools: []*toolenv.Tool{filter, retrieve, plain}}
	out := Oracle{}.Run(context.Background(), &Episode{Task: task, Session: s})
	if len(s.calls) != 3 || !out.Trajectory.Finished {
		t.Fatalf("%d calls sent, want 3: %+v", len(s.calls), s.calls)
	}
	if got := s.calls[1].Args; got["data_source"] != "$F_0$" || got["first"] != "$F_0.values[0]$" {
		t.Errorf("retrieve_data got %v, want the references to F_0 as written", got)
	}
	if got := fmt.Sprint(s.calls[2].Args["id"]); got != "2" {
		t.Errorf("get_item got id %v, want 2 resolved from R's output", got)
	}
}
