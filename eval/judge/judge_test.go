package judge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/toolenv/toolenv/eval/metrics"
	"github.com/toolenv/toolenv/eval/stb"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/llm"
	"github.com/toolenv/toolenv/llm/llmtest"
)

func converted(t *testing.T, id string) *stb.Converted {
	t.Helper()
	f, err := stb.ReadConverted(shareddata.Require(t, "stabletoolbench", "data_example", "model_predictions_converted", "virtual_chatgpt_cot", "G1_instruction.json"))
	if err != nil {
		t.Fatal(err)
	}
	return f.Entries[id]
}

func statusCall(status string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c", Type: "function", Function: llm.FunctionCall{Name: "check_answer_status", Arguments: `{"answer_status": "` + status + `", "reason": "because"}`}}}}
}

func newJudge(srv *llmtest.Server) *Judge {
	return &Judge{Model: llm.New(srv.URL(), llm.Options{MaxRetries: 1, Backoff: time.Millisecond}), ModelName: "judge", Seed: 3}
}

func TestSoPRRules(t *testing.T) {
	srv := llmtest.New(llmtest.Script(statusCall("Solved")))
	defer srv.Close()
	j := newJudge(srv)
	// Query 588's CoT chain never called Finish: Unsolved, no judge.
	c := converted(t, "588")
	if v := j.SoPR(context.Background(), c.Query, &c.Answer); v.Label != metrics.Unsolved || v.Stage != StageRule || v.Reason != "No answer" {
		t.Errorf("no Finish: %+v", v)
	}
	gaveUp := converted(t, "608").Answer
	gaveUp.FinalAnswer = `{"return_type": "give_up_and_restart"}`
	if v := j.SoPR(context.Background(), "q", &gaveUp); v.Label != metrics.Unsolved || v.Stage != StageRule {
		t.Errorf("give up: %+v", v)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d judge calls for rule-decided answers", n)
	}
}

// TestSoPRAsksAsStableToolBench checks the requests: the check prompt
// filled with the query and the raw final answer, the forced function,
// temperature 0.2; an Unsure verdict re-judged with Python's json.dumps
// of the converted answer (hashes computed with CPython's json.dumps of
// the same entries).
func TestSoPRAsksAsStableToolBench(t *testing.T) {
	for _, tt := range []struct{ id, dumpSHA string }{
		{"608", "edc2b5a27b706dfbbb6405d2911cdbd92e963403a7eb6cce52e8520c41b276bb"},
		{"1073", "31469368bcef9393ce9bd3cd380375b97e7e506274cc4c234a0fe0d349005b19"},
	} {
		t.Run(tt.id, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script(statusCall("Unsure"), statusCall("AnswerStatus.Solved")))
			defer srv.Close()
			c := converted(t, tt.id)
			v := newJudge(srv).SoPR(context.Background(), c.Query, &c.Answer)
			if v.Label != metrics.Solved || v.Stage != StageParse || v.Reason != "because" {
				t.Fatalf("verdict %+v", v)
			}
			reqs := srv.Requests()
			want := "\nGiving the query and answer, you need give `answer_status` of the answer by following rules:\n1. If the answer is a sorry message or not a positive/straight response for the given query, return \"Unsolved\".\n2. If the answer is a positive/straight response for the given query, you have to further check.\n2.1 If the answer is not sufficient to determine whether the solve the query or not, return \"Unsure\".\n2.2 If you are confident that the answer is sufficient to determine whether the solve the query or not, return \"Solved\" or \"Unsolved\".\n\nQuery:\n" +
				c.Query + "\nAnswer:\n" + c.Answer.FinalAnswer + "\n\nNow give your reason in \"content\" and `answer_status` of JSON to `check_answer_status`.\n"
			if got := reqs[0].Messages[0].Content; got != want {
				t.Errorf("check prompt:\n%q\nwant\n%q", got, want)
			}
			if reqs[0].Temperature == nil || *reqs[0].Temperature != 0.2 || reqs[0].Tools[0].Function.Name != "check_answer_status" || reqs[0].ToolChoice == nil {
				t.Errorf("request settings: temp %v tools %+v choice %v", reqs[0].Temperature, reqs[0].Tools, reqs[0].ToolChoice)
			}
			p := reqs[1].Messages[0].Content
			i := strings.Index(p, "\nAnswer:\n")
			j := strings.LastIndex(p, "\n\nNow you are requested")
			dump := p[i+len("\nAnswer:\n") : j]
			sum := sha256.Sum256([]byte(dump))
			if hex.EncodeToString(sum[:]) != tt.dumpSHA {
				t.Errorf("parse_answer_status answer is not Python's json.dumps of the converted answer:\n%.400s", dump)
			}
		})
	}
}

func TestSoPRReadsWhatJudgesWrite(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		want  metrics.Label
		err   bool
	}{
		{"function call", statusCall("Unsolved"), metrics.Unsolved, false},
		{"json in content", llmtest.Reply{Content: "Sure. {\"answer_status\": \"Solved\", \"reason\": \"complete\"}"}, metrics.Solved, false},
		{"one word", llmtest.Reply{Content: "The answer is Unsolved because it apologises."}, metrics.Unsolved, false},
		{"two words", llmtest.Reply{Content: "Either Solved or Unsolved."}, metrics.Unparseable, false},
		{"garbage", llmtest.Reply{Content: "¯\\_(ツ)_/¯"}, metrics.Unparseable, false},
		{"bad enum", statusCall("Maybe"), metrics.Unparseable, false},
		{"judge down", llmtest.Reply{Status: 503}, metrics.Unparseable, true},
	}
	c := converted(t, "1073")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script(tt.reply))
			defer srv.Close()
			v := newJudge(srv).SoPR(context.Background(), c.Query, &c.Answer)
			if v.Label != tt.want || (v.Error != "") != tt.err {
				t.Errorf("verdict %+v, want %s (error %v)", v, tt.want, tt.err)
			}
		})
	}
}

func TestFAC(t *testing.T) {
	c := converted(t, "1073")
	tests := []struct {
		reply string
		want  metrics.Label
	}{
		{"Answer Status\nSolved\nReason\nAll parts addressed.", metrics.Solved},
		{"Answer Status: Unsolved\nReason: Refusal.", metrics.Unsolved},
		{"I cannot tell.", metrics.Unparseable},
	}
	for _, tt := range tests {
		srv := llmtest.New(llmtest.Script(llmtest.Reply{Content: tt.reply}))
		v := newJudge(srv).FAC(context.Background(), c.Query, c.Answer.FinalAnswer)
		req := srv.Requests()[0]
		srv.Close()
		if v.Label != tt.want {
			t.Errorf("%q: %+v, want %s", tt.reply, v, tt.want)
		}
		p := req.Messages[0].Content
		if !strings.HasPrefix(p, "\ngpt-4-turbo\n\nGiven a query and an answer provided by an AI agent") ||
			!strings.HasSuffix(p, "Query: \n"+c.Query+"\nAnswer: \n"+c.Answer.FinalAnswer+"\n\nNow give your reason and answer status in the following format:\n\nAnswer Status\nxxx (can only be \"Solved\" or \"Unsolved\")\nReason\nxxx\n") {
			t.Errorf("FAC prompt:\n%s", p)
		}
		if *req.Temperature != 0 || req.MaxTokens != 512 {
			t.Errorf("FAC request temperature %v max tokens %d", *req.Temperature, req.MaxTokens)
		}
	}
	srv := llmtest.New(llmtest.Script())
	defer srv.Close()
	if v := newJudge(srv).FAC(context.Background(), "q", ""); v.Label != metrics.Unsolved || v.Stage != StageRule || len(srv.Requests()) != 0 {
		t.Errorf("empty answer: %+v", v)
	}
	if v := newJudge(srv).FAC(context.Background(), "q", `{\"final_answer\": \"x\"}`); len(srv.Requests()) != 1 || !strings.Contains(srv.Requests()[0].Messages[0].Content, "Answer: \n{\\\"final_answer") {
		_ = v
		t.Errorf("an answer starting with {\\ that is not JSON is sent as written")
	}
}

func TestPromptsAreVersioned(t *testing.T) {
	for _, p := range Prompts() {
		if p.Name == "" || p.Version == "" || !strings.Contains(p.Source, "reproduced exactly") || len(p.SHA256) != 16 {
			t.Errorf("prompt %+v", p)
		}
	}
}
