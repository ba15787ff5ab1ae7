package fidelity

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
)

// FuzzVerdicts feeds any judge reply to the verdict readers and any
// payload to the text and envelope writers: no panic, a rating only in
// 1–10, an envelope that is JSON-shaped, args that decode to an object.
func FuzzVerdicts(f *testing.F) {
	f.Add("Rating: [[8]]", `{"a": 1}`)
	f.Add("```json\n{‘‘overall_eval’’: 1, ‘‘reason’’: ‘‘x’’}\n```", `"{\"a\": [1, 2]}"`)
	f.Add(`{'overall_eval': '0', 'reason': None}`, `"text"`)
	f.Add("[[1e400]] [9999999999999999999]", `[1, 2,`)
	f.Fuzz(func(t *testing.T, reply, body string) {
		if r, ok := ParseRating(reply); ok && (r < 1 || r > 10) {
			t.Fatalf("rating %v accepted", r)
		}
		if v, ok := ParseDocVerdict(reply); !ok && (v.Follows || v.Reason != "") {
			t.Fatalf("a verdict from nothing: %+v", v)
		}
		text := Text(json.RawMessage(body), reply)
		// Laying JSON out anew keeps its value.
		if b := strings.TrimSpace(body); json.Valid([]byte(b)) && b != "" && b[0] != '"' && b != "null" {
			want, err1 := toolenv.CanonicalizeJSON([]byte(b))
			got, err2 := toolenv.CanonicalizeJSON([]byte(text))
			if err1 == nil && (err2 != nil || string(got) != string(want)) {
				t.Fatalf("Text(%q) = %q changes the value", body, text)
			}
		}
		env := Envelope(json.RawMessage(body), reply)
		if !strings.HasPrefix(env, `{"error": `) || !strings.HasSuffix(env, "}") {
			t.Fatalf("envelope %q", env)
		}
		if args, err := decodeArgs(json.RawMessage(body)); err == nil && args == nil {
			t.Fatal("decoded args are nil")
		}
	})
}

// FuzzReadPredictions: any file is read as predictions or refused with
// an error naming the line — never a panic — and what is read scores.
func FuzzReadPredictions(f *testing.F) {
	f.Add([]byte(`{"prompt": "API doc:", "predict": "{\"error\": \"\"}", "label": "{\"error\": \"\"}"}` + "\n" + `{"predict": "", "label": "é"}`))
	f.Add([]byte(`{"predict": 1, "label": "x"}`))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := "g.jsonl"
		preds, err := readPredictions(bytes.NewReader(data), p)
		if err != nil {
			if !strings.Contains(err.Error(), "g.jsonl") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		rep, err := ScorePredictions(context.Background(), p, preds, PredictionsConfig{})
		if err != nil || rep.BLEU.N != len(preds) || rep.BLEU.Mean < 0 || rep.BLEU.Mean > 100 {
			t.Fatalf("%+v %v", rep, err)
		}
	})
}
