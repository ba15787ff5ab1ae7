package metrics

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolenv/toolenv/internal/pyfmt"
)

// TestNestfulParsersMatchReference holds each of NESTful's output parsers
// to what IBM NESTful's own calculate_scores returned with it (its
// scorer.py, selecting the parser by model, run unchanged:
// testdata/nestful_parsers/reference.py) on generated samples whose
// predictions are written the ways models write them (fenced JSON,
// <tool_call> tags, bare objects, xLAM's {"tool_calls"}, prose, <think>
// blocks, scalars, Python's whitespace): every set as a whole and every
// sample alone, to 1e-9 and as printed, and the samples the reference
// stops on.
func TestNestfulParsersMatchReference(t *testing.T) {
	dir := filepath.Join("testdata", "nestful_parsers")
	load := func(name string) pyfmt.Dict {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		v, err := pyfmt.Loads(string(raw))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v.(pyfmt.Dict)
	}
	cases, ref := load("cases.json"), load("reference.json")
	var sets []nestfulSet
	raw, _ := cases.Get("sets")
	for _, s := range raw.([]any) {
		d := s.(pyfmt.Dict)
		name, _ := d.Get("name")
		set := nestfulSet{Name: name.(string)}
		samples, _ := d.Get("samples")
		for _, x := range samples.([]any) {
			sd := x.(pyfmt.Dict)
			id, _ := sd.Get("id")
			g, _ := sd.Get("gold")
			p, _ := sd.Get("pred")
			set.Samples = append(set.Samples, NestfulSample{ID: id.(string), Gold: g.(string), Pred: p.(string)})
		}
		sets = append(sets, set)
	}
	refSets, _ := ref.Get("sets")
	compare := func(t *testing.T, got NestfulResult, err error, want pyfmt.Dict) []string {
		if e, ok := want.Get("error"); ok && strings.HasPrefix(e.(string), "TypeError") {
			var se *NestfulSampleError
			if !errors.As(err, &se) || se.Side != "prediction" {
				return []string{"want the reference's stop (" + e.(string) + "), got " + errString(err)}
			}
			return nil
		}
		return nestfulDiff(t, got, err, want)
	}
	for _, parser := range []string{NestfulParserGranite, NestfulParserLlama, NestfulParserHammer, NestfulParserAgent} {
		t.Run(parser, func(t *testing.T) {
			pr, ok := refSets.(pyfmt.Dict).Get(parser)
			if !ok {
				t.Fatalf("no reference for %s", parser)
			}
			opt := NestfulOptions{Parser: parser}
			total, equal := 0, 0
			for _, set := range sets {
				r, _ := pr.(pyfmt.Dict).Get(set.Name)
				rd := r.(pyfmt.Dict)
				agg, _ := rd.Get("aggregate")
				got, err := Nestful(set.Samples, opt)
				if d := compare(t, got, err, agg.(pyfmt.Dict)); len(d) > 0 {
					t.Errorf("%s: aggregate: %v", set.Name, d)
				}
				per, _ := rd.Get("per")
				for _, s := range set.Samples {
					w, _ := per.(pyfmt.Dict).Get(s.ID)
					total++
					got, err := Nestful([]NestfulSample{s}, opt)
					if d := compare(t, got, err, w.(pyfmt.Dict)); len(d) > 0 {
						t.Errorf("%s %s: %v\n gold %s\n pred %q", set.Name, s.ID, d, s.Gold, s.Pred)
						continue
					}
					equal++
				}
			}
			if total < 250 {
				t.Fatalf("only %d samples", total)
			}
			t.Logf("%s: %d of %d samples equal to the reference", parser, equal, total)
		})
	}
}

// TestNestfulParserFor: the reference's model table picks the parser;
// models it reads with a parser toolenv lacks, or does not know, are
// errors that say what to do.
func TestNestfulParserFor(t *testing.T) {
	for model, want := range map[string]string{"granite-3.1-8b-instruct": "granite", "qwen-2.5-3B-instruct": "granite", "Llama-3.1-8B-Instruct": "llama", "Hammer2.0-7b": "hammer", "xLAM-7b-fc-r": "agent"} {
		if got, err := NestfulParserFor(model); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", model, got, err, want)
		}
	}
	for model, want := range map[string]string{"ToolAce-8b": "parse_ToolAce", "Qwen3-8B": "model not handled"} {
		if _, err := NestfulParserFor(model); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", model, err, want)
		}
	}
}
