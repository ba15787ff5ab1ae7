package fidelity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/eval/bleu"
	"github.com/toolenv/toolenv/llm"
)

// Embedder turns texts into vectors. mapping/embed's Hash (offline) and
// Remote (an OpenAI-compatible endpoint) implement it.
type Embedder interface {
	// Name identifies the model.
	Name() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// BLEUOptions say how BLEU is computed: the tokenisation ("chars" or
// "words") and NLTK's smoothing method.
type BLEUOptions struct {
	Tokens    string         `json:"tokens"`
	Smoothing bleu.Smoothing `json:"-"`
}

// DefaultBLEU is the MirrorAPI pipeline's BLEU-4: characters, method3.
var DefaultBLEU = BLEUOptions{Tokens: "chars", Smoothing: bleu.Method3}

// Config configures Run.
type Config struct {
	// Simulator answers the calls: the virtual backend under test, with
	// no cache in front of it. Its example source should be wrapped in
	// HoldOut.
	Simulator toolenv.Handler
	// Tools resolves the pairs' tool IDs.
	Tools Resolver
	// Embedder scores the cosine; nil skips it.
	Embedder Embedder
	// Judge asks for the two verdicts; nil skips them.
	Judge *Judge
	// BLEU defaults to DefaultBLEU.
	BLEU *BLEUOptions
	// Concurrency is how many pairs are scored at once; default 4.
	Concurrency int
	// Progress is called after each scored pair; may be nil.
	Progress func(done, total int, s *Scored)
	// Logger logs failed calls at debug level; nil discards.
	Logger *slog.Logger
	// Failure, when set, says why a simulator's result is no answer of
	// the simulator under test ("" when it is one): its endpoint did not
	// answer, its answer could not be read. Such a pair is kept with
	// Failed set and left out of every score, never scored in place of
	// an answer; outage says the endpoint itself failed.
	Failure func(r *toolenv.Result) (why string, outage bool)
	// StopAfterFailures stops the run when this many pairs in a row (in
	// the order they finish) met a model that did not answer: the
	// simulator (an outage), the judge or the embeddings endpoint, after
	// their retries. Run then returns the pairs finished with a
	// StatusUnavailable error wrapping ErrStopped. 0 means 3; negative
	// never stops.
	StopAfterFailures int
}

// ErrStopped is wrapped by Run's error when it stopped after
// StopAfterFailures pairs in a row met a model that did not answer.
var ErrStopped = errors.New("stopped: a model did not answer")

// Scored is one pair with the simulator's answer and its scores.
type Scored struct {
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Origin string          `json:"origin"`
	// Real and Simulated are the compared texts (see Text).
	Real       string         `json:"real"`
	RealStatus toolenv.Status `json:"real_status"`
	Simulated  string         `json:"simulated"`
	// SimStatus, Source and SimError describe the simulator's result.
	SimStatus toolenv.Status `json:"simulated_status"`
	Source    toolenv.Source `json:"source,omitempty"`
	SimError  string         `json:"simulated_error,omitempty"`
	Warnings  []string       `json:"warnings,omitempty"`
	// BLEU is the sentence BLEU, from 0 to 1.
	BLEU float64 `json:"bleu"`
	// Cosine is the embeddings' cosine similarity; nil when not measured
	// (EmbedError says why when it failed).
	Cosine     *float64    `json:"cosine,omitempty"`
	EmbedError string      `json:"embed_error,omitempty"`
	Rating     *Rating     `json:"rating,omitempty"`
	Doc        *DocVerdict `json:"doc_following,omitempty"`
	// Failed says why the simulator gave no answer to score (Config's
	// Failure): the pair is left out of every score.
	Failed    string `json:"failed,omitempty"`
	outage    bool
	embedDown bool
}

// modelFailed says a model the pair needed did not answer: the
// simulator's endpoint, the judge's, or the embeddings endpoint's.
func (s *Scored) modelFailed() string {
	switch {
	case s.outage:
		return "simulator: " + s.Failed
	case s.Rating != nil && s.Rating.Error != "":
		return "judge: " + s.Rating.Error
	case s.Doc != nil && s.Doc.Error != "":
		return "judge: " + s.Doc.Error
	case s.embedDown:
		return "embeddings: " + s.EmbedError
	}
	return ""
}

// Run answers every pair with the simulator and scores the answer. The
// results are in the pairs' order. A pair whose tool is not loaded is
// an error (Resolve drops them first). When ctx ends it stops, returning
// the pairs it finished before (a pair still being scored is left out)
// with ctx's error.
func Run(ctx context.Context, cfg Config, pairs []*Pair) ([]*Scored, error) {
	bo := DefaultBLEU
	if cfg.BLEU != nil {
		bo = *cfg.BLEU
	}
	tok, err := bleu.ParseTokenizer(bo.Tokens)
	if err != nil {
		return nil, err
	}
	for _, p := range pairs {
		if cfg.Tools.Tool(p.Tool) == nil {
			return nil, fmt.Errorf("fidelity: tool %s is not loaded (load its collection, or drop its pairs with Resolve)", p.Tool)
		}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	conc := cfg.Concurrency
	if conc <= 0 {
		conc = 4
	}
	out := make([]*Scored, len(pairs))
	var (
		mu      sync.Mutex
		done    int
		wg      sync.WaitGroup
		inARow  int
		stopped string
	)
	stopAfter := cfg.StopAfterFailures
	if stopAfter == 0 {
		stopAfter = 3
	}
	outer := ctx
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	next := make(chan int)
	for range min(conc, max(len(pairs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s := score(ctx, &cfg, pairs[i], tok, bo.Smoothing, log)
				if ctx.Err() != nil {
					continue // interrupted: some of its scores may be missing
				}
				mu.Lock()
				out[i] = s
				done++
				if cfg.Progress != nil {
					cfg.Progress(done, len(pairs), s)
				}
				if why := s.modelFailed(); why != "" {
					inARow++
					if stopAfter > 0 && inARow >= stopAfter && stopped == "" {
						stopped = fmt.Sprintf("%d pairs in a row met a model that did not answer (the last: %s)", inARow, why)
						log.Error("stopping the run", "why", stopped)
						stop()
					}
				} else {
					inARow = 0
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range pairs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		var kept []*Scored
		for _, s := range out {
			if s != nil {
				kept = append(kept, s)
			}
		}
		if err := outer.Err(); err != nil {
			return kept, err
		}
		return kept, &toolenv.Error{Status: toolenv.StatusUnavailable, Message: fmt.Sprintf("after %d of %d pairs: %s", len(kept), len(pairs), stopped), Err: ErrStopped,
			Hint: "check the model endpoints (--llm-url, --judge-url, --embed-url), then run again: answers already made are in the records"}
	}
	return out, nil
}

func score(ctx context.Context, cfg *Config, p *Pair, tok bleu.Tokenizer, sm bleu.Smoothing, log *slog.Logger) *Scored {
	canon := p.canon()
	t := withoutExample(cfg.Tools.Tool(p.Tool), canon)
	args := cloneArgs(p.Args)
	res := cfg.Simulator.Invoke(withHeldOut(ctx, p.Tool, canon), &toolenv.Call{Tool: t, Args: args, Frontend: "fidelity"})
	if res == nil {
		res = toolenv.Errorf(toolenv.StatusInternal, "", "the simulator returned no result")
	}
	if !res.OK() {
		log.Debug("simulator answered with an error", "tool", p.Tool, "status", res.Status, "err", res.Error)
	}
	s := &Scored{
		Tool: p.Tool, Args: json.RawMessage(canon), Origin: p.Origin,
		Real: Text(p.Response, p.Error), RealStatus: p.status(),
		Simulated: Text(res.Body, res.Error), SimStatus: res.Status, Source: res.Source, SimError: res.Error, Warnings: res.Warnings,
	}
	if cfg.Failure != nil {
		if why, outage := cfg.Failure(res); why != "" {
			s.Failed, s.outage = why, outage
			return s // no answer of the simulator under test: nothing to score
		}
	}
	// Sentence scores cannot fail: one reference, a known smoothing.
	s.BLEU, _ = bleu.Sentence([][]string{tok(s.Real)}, tok(s.Simulated), bleu.Options{Smoothing: sm})
	if cfg.Embedder != nil {
		vs, err := cfg.Embedder.Embed(ctx, []string{s.Real, s.Simulated})
		var le *llm.Error
		switch {
		case err != nil:
			s.EmbedError, s.embedDown = err.Error(), errors.As(err, &le)
		case len(vs) != 2:
			s.EmbedError = fmt.Sprintf("%d vectors for 2 texts", len(vs))
		default:
			if c, ok := Cosine(vs[0], vs[1]); ok {
				s.Cosine = &c
			} else {
				s.EmbedError = "vectors of different sizes, or a zero vector"
			}
		}
	}
	if cfg.Judge != nil {
		real, sim := Envelope(p.Response, p.Error), Envelope(res.Body, res.Error)
		r := cfg.Judge.Rate(ctx, t, p.Args, real, sim)
		d := cfg.Judge.FollowsDoc(ctx, t, p.Args, sim)
		s.Rating, s.Doc = &r, &d
	}
	return s
}

// cloneArgs copies the top level of args: a backend may not keep or
// change the pair's own map.
func cloneArgs(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = v
	}
	return out
}

// Cosine returns the cosine similarity of a and b; ok is false when
// they differ in size or one is zero.
func Cosine(a, b []float32) (float64, bool) {
	if len(a) != len(b) || len(a) == 0 {
		return 0, false
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0, false
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb)), true
}
