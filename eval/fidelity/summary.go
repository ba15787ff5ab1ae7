package fidelity

import (
	"fmt"
	"maps"
	"slices"

	toolenv "github.com/toolenv/toolenv"

	"github.com/toolenv/toolenv/eval/bleu"
	"github.com/toolenv/toolenv/internal/promptfile"
)

// Settings say what was measured and how; they head the summary.
type Settings struct {
	// Simulator describes the simulator under test ("synthesizer" or the
	// LLM endpoint's model and prompt).
	Simulator string `json:"simulator"`
	// BLEU names the tokenisation and smoothing.
	BLEUTokens    string `json:"bleu_tokens"`
	BLEUSmoothing string `json:"bleu_smoothing"`
	// Embedder names the embedding model ("" when not measured) and
	// says whether it is the offline one.
	Embedder        string `json:"embedder,omitempty"`
	EmbedderOffline bool   `json:"embedder_offline,omitempty"`
	// Judge is the judge model ("" when not judged).
	Judge   string              `json:"judge,omitempty"`
	Prompts []promptfile.Prompt `json:"prompts,omitempty"`
	// Sample and Seed are the per-tool sample size (0: all) and its seed.
	Sample int   `json:"sample,omitempty"`
	Seed   int64 `json:"seed"`
	// Sources are the inputs (the store, pairs files, documentation).
	Sources []string `json:"sources"`
}

// Stat is a mean over the pairs that have the value.
type Stat struct {
	Mean float64 `json:"mean"`
	N    int     `json:"n"`
}

func mean(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	return Stat{Mean: bleu.Fsum(xs) / float64(len(xs)), N: len(xs)}
}

// Scores aggregate a set of pairs. BLEU and cosine are on the paper's
// 0–100 scale; the rating is 1–10; documentation following and status
// agreement are percentages.
type Scores struct {
	Pairs int `json:"pairs"`
	// BLEU is the mean sentence BLEU × 100 (the paper's figure);
	// CorpusBLEU NLTK's corpus_bleu of all the pairs × 100.
	BLEU       Stat    `json:"bleu"`
	CorpusBLEU float64 `json:"corpus_bleu"`
	Cosine     Stat    `json:"cosine"`
	// EmbedFailed counts pairs whose embeddings failed.
	EmbedFailed int  `json:"embed_failed,omitempty"`
	Rating      Stat `json:"rating"`
	// RatingUnparseable counts replies with no rating; RatingFailed
	// judges that could not be asked. Likewise for DocFollowing.
	RatingUnparseable int  `json:"rating_unparseable,omitempty"`
	RatingFailed      int  `json:"rating_failed,omitempty"`
	DocFollowing      Stat `json:"doc_following"`
	DocUnparseable    int  `json:"doc_unparseable,omitempty"`
	DocFailed         int  `json:"doc_failed,omitempty"`
	// StatusAgreement is the percentage of pairs where the simulator
	// succeeded exactly when the real API did.
	StatusAgreement Stat `json:"status_agreement"`
	// Sources counts the simulated answers by source (simulator,
	// synthesizer, ...).
	Sources map[string]int `json:"sources"`
	// Failed counts the pairs the simulator gave no answer to score
	// (Scored.Failed): they are in Pairs and in no score.
	Failed int `json:"failed,omitempty"`
}

// ToolScores are the scores of one tool.
type ToolScores struct {
	Tool string `json:"tool"`
	Scores
}

// Summary is what summary.json holds: the settings, the overall scores
// and each tool's.
type Summary struct {
	Settings Settings     `json:"settings"`
	Overall  Scores       `json:"overall"`
	Tools    []ToolScores `json:"tools"`
	// Status counts the pairs against the plan, when the run's plan is
	// known (the caller sets it): an interrupted or stopped run's scores
	// are over fewer pairs than planned.
	Status *RunStatus `json:"status,omitempty"`
	// Skipped says which inputs were left out and why.
	Skipped []string `json:"skipped,omitempty"`
	// Provenance is the toolenv and the configuration that made the
	// scores, when the caller records them.
	Provenance *toolenv.Provenance `json:"provenance,omitempty"`
}

// RunStatus counts a fidelity run's pairs: Planned to score, Scored
// (the simulator answered), Failed (it gave no answer to score), Missing
// (never asked: the run was interrupted or stopped).
type RunStatus struct {
	Planned     int    `json:"planned"`
	Scored      int    `json:"scored"`
	Failed      int    `json:"failed"`
	Missing     int    `json:"missing"`
	Interrupted bool   `json:"interrupted,omitempty"`
	Stopped     string `json:"stopped,omitempty"`
	// Complete says every planned pair was scored.
	Complete bool `json:"complete"`
}

// NewStatus counts scored against planned pairs; stopped says why the
// run stopped early ("" if it did not).
func NewStatus(planned int, scored []*Scored, interrupted bool, stopped string) *RunStatus {
	st := &RunStatus{Planned: planned, Interrupted: interrupted, Stopped: stopped}
	for _, x := range scored {
		if x.Failed != "" {
			st.Failed++
		} else {
			st.Scored++
		}
	}
	st.Missing = max(planned-st.Scored-st.Failed, 0)
	st.Complete = st.Missing == 0 && st.Failed == 0 && !interrupted && stopped == ""
	return st
}

// Banner says, for a run that did not score every planned pair, how many
// it scored and why the others are not; "" for a complete run.
func Banner(st *RunStatus) string {
	if st == nil || st.Complete {
		return ""
	}
	s := fmt.Sprintf("Incomplete run: %d of %d planned pairs scored", st.Scored, st.Planned)
	if st.Failed > 0 {
		s += fmt.Sprintf("; %d got no answer from the simulator to score", st.Failed)
	}
	if st.Missing > 0 {
		s += fmt.Sprintf("; %d never asked", st.Missing)
		switch {
		case st.Stopped != "":
			s += " because the run stopped: " + st.Stopped
		case st.Interrupted:
			s += " because the run was interrupted"
		}
	}
	if st.Scored == 0 {
		return s + ". Nothing was measured: the figures below are not scores."
	}
	return s + ". Every figure below is over the pairs scored, as its n says."
}

// Summarize aggregates scored pairs per tool (sorted by tool ID) and
// overall.
func Summarize(settings Settings, scored []*Scored, skipped []string) *Summary {
	s := &Summary{Settings: settings, Skipped: skipped, Tools: []ToolScores{}}
	opts := BLEUOptions{Tokens: settings.BLEUTokens}
	if sm, err := bleu.ParseSmoothing(settings.BLEUSmoothing); err == nil {
		opts.Smoothing = sm
	}
	s.Overall = aggregate(scored, opts)
	byTool := map[string][]*Scored{}
	for _, x := range scored {
		byTool[x.Tool] = append(byTool[x.Tool], x)
	}
	for _, t := range slices.Sorted(maps.Keys(byTool)) {
		s.Tools = append(s.Tools, ToolScores{Tool: t, Scores: aggregate(byTool[t], opts)})
	}
	return s
}

func aggregate(scored []*Scored, o BLEUOptions) Scores {
	sc := Scores{Pairs: len(scored), Sources: map[string]int{}}
	var b, cos, rating, doc, agree []float64
	tok, err := bleu.ParseTokenizer(o.Tokens)
	if err != nil {
		tok = bleu.Chars
	}
	refs := make([][][]string, 0, len(scored))
	hyps := make([][]string, 0, len(scored))
	for _, x := range scored {
		if x.Failed != "" {
			sc.Failed++
			continue
		}
		b = append(b, 100*x.BLEU)
		refs = append(refs, [][]string{tok(x.Real)})
		hyps = append(hyps, tok(x.Simulated))
		if x.Cosine != nil {
			cos = append(cos, 100**x.Cosine)
		} else if x.EmbedError != "" {
			sc.EmbedFailed++
		}
		if r := x.Rating; r != nil {
			switch {
			case r.Parsed:
				rating = append(rating, r.Score)
			case r.Error != "":
				sc.RatingFailed++
			default:
				sc.RatingUnparseable++
			}
		}
		if d := x.Doc; d != nil {
			switch {
			case d.Parsed && d.Follows:
				doc = append(doc, 100)
			case d.Parsed:
				doc = append(doc, 0)
			case d.Error != "":
				sc.DocFailed++
			default:
				sc.DocUnparseable++
			}
		}
		if (x.RealStatus == "ok") == (x.SimStatus == "ok") {
			agree = append(agree, 100)
		} else {
			agree = append(agree, 0)
		}
		sc.Sources[string(x.Source)]++
	}
	sc.BLEU, sc.Cosine, sc.Rating, sc.DocFollowing, sc.StatusAgreement = mean(b), mean(cos), mean(rating), mean(doc), mean(agree)
	if c, err := bleu.Corpus(refs, hyps, bleu.Options{Smoothing: o.Smoothing}); err == nil {
		sc.CorpusBLEU = 100 * c
	}
	return sc
}
