package perturb

import (
	"bufio"
	"context"
	_ "embed"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/llm"
)

// The modes.
const (
	Distractor  = "distractor"
	CaseMix     = "case_mix"
	Punctuation = "punctuation"
	Paraphrase  = "paraphrase"
)

// Modes lists the modes.
var Modes = []string{Distractor, CaseMix, Punctuation, Paraphrase}

// The task Meta keys a perturbation writes.
const (
	MetaMode     = "perturbation"
	MetaOriginal = "original_query"
	MetaVariant  = "perturbation_variant"
	MetaFailed   = "perturbation_failed"
)

// Model is the chat endpoint paraphrases come from. *llm.Client
// implements it.
type Model interface {
	Chat(ctx context.Context, req *llm.Request) (*llm.Response, error)
}

var _ Model = (*llm.Client)(nil)

// Options configure Perturb.
type Options struct {
	Mode string
	Seed uint64
	// Model and ModelName are the LLM paraphrases come from.
	Model     Model
	ModelName string
	// Attempts bounds the paraphrases asked per query (default 3).
	Attempts int
	// Progress is called after each task.
	Progress func(done, total int)
}

// Report counts what Perturb did.
type Report struct {
	Mode      string         `json:"mode"`
	Seed      uint64         `json:"seed"`
	Tasks     int            `json:"tasks"`
	Changed   int            `json:"changed"`
	Variants  map[string]int `json:"variants,omitempty"`
	Attempts  int            `json:"llm_attempts,omitempty"`
	Rejected  int            `json:"paraphrases_rejected,omitempty"`
	Failed    int            `json:"paraphrase_failures,omitempty"`
	Rejection map[string]int `json:"rejection_reasons,omitempty"`
	// Provenance says which toolenv made the report, and how (set by
	// the caller).
	Provenance *toolenv.Provenance `json:"provenance,omitempty"`
}

// Perturb returns copies of tasks whose queries are perturbed by
// opts.Mode; each keeps its original query in Meta (MetaOriginal) and
// says how it was perturbed (MetaMode, MetaVariant). A paraphrase that
// keeps failing the value check leaves the query as it was, marked
// MetaFailed. Only a canceled ctx or an unreachable model is an error.
func Perturb(ctx context.Context, tasks []*toolenv.Task, opts Options) ([]*toolenv.Task, *Report, error) {
	if !contains(Modes, opts.Mode) {
		return nil, nil, toolenv.Errorw(toolenv.StatusInvalidArguments, "", "perturb: unknown mode %q (want %s)", opts.Mode, strings.Join(Modes, ", "))
	}
	if opts.Mode == Paraphrase && opts.Model == nil {
		return nil, nil, fmt.Errorf("perturb: paraphrase needs an LLM (--llm-url and --llm-model)")
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 3
	}
	rep := &Report{Mode: opts.Mode, Seed: opts.Seed, Tasks: len(tasks), Variants: map[string]int{}, Rejection: map[string]int{}}
	out := make([]*toolenv.Task, 0, len(tasks))
	for i, t := range tasks {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		nt := *t
		nt.Meta = map[string]any{}
		for k, v := range t.Meta {
			nt.Meta[k] = v
		}
		rng := taskRand(opts.Seed, opts.Mode, t.ID)
		var q, variant string
		var err error
		switch opts.Mode {
		case Distractor:
			q, variant = distract(t.Query, rng)
		case CaseMix:
			q, variant = caseMix(t.Query, rng)
		case Punctuation:
			q, variant = punctuate(t.Query, rng)
		case Paraphrase:
			q, variant, err = paraphrase(ctx, t.Query, opts, rng, rep)
			if err != nil {
				return nil, nil, err
			}
		}
		nt.Meta[MetaMode] = opts.Mode
		nt.Meta[MetaOriginal] = t.Query
		nt.Meta[MetaVariant] = variant
		if variant == "failed" {
			nt.Meta[MetaFailed] = true
		}
		if q != t.Query {
			rep.Changed++
		}
		rep.Variants[variant]++
		nt.Query = q
		out = append(out, &nt)
		if opts.Progress != nil {
			opts.Progress(i+1, len(tasks))
		}
	}
	return out, rep, nil
}

// taskRand is the random source of one task: the same seed, mode and task
// give the same perturbation, whatever other tasks there are.
func taskRand(seed uint64, mode, id string) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s", mode, id)
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

//go:embed data/distractors.txt
var distractorFile string

func distractors() []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(distractorFile))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// distract prepends one or two unrelated stories.
func distract(q string, rng *rand.Rand) (string, string) {
	ds := distractors()
	n := 1 + rng.IntN(2)
	var parts []string
	for _, i := range rng.Perm(len(ds))[:n] {
		parts = append(parts, ds[i])
	}
	return strings.Join(parts, " ") + " Anyway, " + lowerFirst(q), fmt.Sprintf("stories:%d", n)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	// Keep "I" and words in capitals (names, acronyms) as they are.
	if len(r) > 1 && r[0] >= 'A' && r[0] <= 'Z' && r[1] >= 'a' && r[1] <= 'z' {
		first := strings.Fields(s)[0]
		if !properNoun(first) {
			r[0] = r[0] - 'A' + 'a'
		}
	}
	return string(r)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
