package mirror

import (
	"container/heap"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/simulate"
	"github.com/toolenv/toolenv/store"
)

// CacheSource is a toolenv store's cache, entry by entry. *store.Store
// implements it.
type CacheSource interface {
	Each(ctx context.Context, fn func(*store.Entry) error) error
}

var _ CacheSource = store.Store(nil)

// CacheSetOptions configure CacheSet.
type CacheSetOptions struct {
	// Out is the folder written.
	Out string
	// Test is how many entries are held out as the test set; default
	// 200, the paper's sample (§4.4).
	Test int
	// Origins are the entry origins used; default "upstream" and
	// "import" (real answers; a simulator's are never training data).
	Origins []string
	Seed    int64
	// Progress receives a progress bar per pass over the store; nil
	// shows none.
	Progress io.Writer
}

// CacheSetStats says what CacheSet wrote.
type CacheSetStats struct {
	Entries int `json:"entries"`
	Train   int `json:"train"`
	Test    int `json:"test"`
	// Skipped counts entries not used, by reason.
	Skipped map[string]int `json:"skipped"`
}

// The files CacheSet writes.
const (
	FileCacheTest         = "test.jsonl"          // the held-out entries as pairs (eval fidelity --pairs)
	FileCacheTestMessages = "test.messages.jsonl" // and as SFT prompts with the real answer as reference
)

// CacheSet writes the "cache model" data of the paper's §4.4 (MirrorAPI-
// Cache): the real answers a toolenv store holds (the StableToolBench
// cache toolenv serves from, or answers it recorded from the upstream) as
// SFT samples, with Test of them held out, chosen by a seeded hash. The
// tools give each entry its documentation; an entry of a tool not among
// them is skipped and counted. It reads the store twice and keeps only
// the held-out keys in memory.
func CacheSet(ctx context.Context, src CacheSource, tools []*toolenv.Tool, opts CacheSetOptions) (*CacheSetStats, error) {
	if opts.Out == "" {
		return nil, usage("cache set: no output folder")
	}
	if opts.Test == 0 {
		opts.Test = 200
	}
	if len(opts.Origins) == 0 {
		opts.Origins = []string{"upstream", "import"}
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, err
	}
	e := &Engine{Tools: tools}
	st := &CacheSetStats{Skipped: map[string]int{}}
	use := func(en *store.Entry) (string, bool) {
		ok := false
		for _, o := range opts.Origins {
			ok = ok || en.Origin == o
		}
		switch {
		case !ok:
			return "origin " + en.Origin, false
		case e.tool(en.Tool) == nil:
			return "tool not loaded", false
		}
		if _, err := decodeArgs(en.Args); err != nil {
			return "arguments not JSON", false
		}
		return "", true
	}
	// Pass 1: the held-out entries, the Test smallest seeded hashes.
	mix := seedHash(opts.Seed, "cache-test")
	var h keyHeap
	bar := barOn(opts.Progress, -1, "cache-set: choose the test entries")
	err := src.Each(ctx, func(en *store.Entry) error {
		bar.Add(1)
		st.Entries++
		if why, ok := use(en); !ok {
			st.Skipped[why]++
			return nil
		}
		k := heldKey{h: Hash(en.Tool, en.Args) ^ mix, key: PairKey{Tool: en.Tool, Args: en.Args}}
		if h.Len() < opts.Test {
			heap.Push(&h, k)
		} else if opts.Test > 0 && k.less(h[0]) {
			h[0] = k
			heap.Fix(&h, 0)
		}
		return nil
	})
	bar.Finish()
	if err != nil {
		return nil, fmt.Errorf("cache set: read the store: %w", err)
	}
	test := make(map[PairKey]bool, h.Len())
	for _, k := range h {
		test[k.key] = true
	}
	// Pass 2: write.
	w, err := newTrainWriter(opts.Out)
	if err != nil {
		return nil, err
	}
	tf, err := newAtomicFile(filepath.Join(opts.Out, FileCacheTest))
	if err != nil {
		w.abort()
		return nil, err
	}
	mf, err := newAtomicFile(filepath.Join(opts.Out, FileCacheTestMessages))
	if err != nil {
		w.abort()
		tf.abort()
		return nil, err
	}
	docs := newDocCache(e)
	var testPairs []benchPair
	bar = barOn(opts.Progress, st.Entries, "cache-set: write the samples")
	defer bar.Finish()
	err = src.Each(ctx, func(en *store.Entry) error {
		bar.Add(1)
		if _, ok := use(en); !ok {
			return nil
		}
		p := &Pair{Tool: en.Tool, Args: en.Args, Status: en.Status, Body: en.Body, Error: en.Error, Origin: OriginReal}
		if !test[p.Key()] {
			s, err := docs.sample(p, false)
			if err != nil {
				return err
			}
			st.Train++
			return w.write(s)
		}
		t := e.tool(en.Tool)
		args, _ := decodeArgs(en.Args)
		resp := en.Body
		if len(resp) == 0 {
			resp = json.RawMessage(`""`)
		}
		testPairs = append(testPairs, benchPair{Tool: en.Tool, Args: json.RawMessage(en.Args), Response: resp, Error: en.Error, Status: en.Status,
			Split: "cache_test", API: t.TitleOrName(), Category: Category(t), Origin: en.Origin})
		st.Test++
		return mf.writeJSON(benchMessages{Messages: []message{{Role: "system", Content: simulate.SFTSystemPrompt}, {Role: "user", Content: docs.userTurn(t, args)}},
			Reference: ResponseText(en.Body, en.Error), Tool: en.Tool})
	})
	if err == nil {
		for _, bp := range testPairs {
			if err = tf.writeJSON(bp); err != nil {
				break
			}
		}
	}
	if err != nil {
		w.abort()
		tf.abort()
		mf.abort()
		return nil, fmt.Errorf("cache set: %w", err)
	}
	for _, c := range []func() error{w.close, tf.close, mf.close} {
		if err := c(); err != nil {
			return nil, err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Cache-model data (MirrorAPI-Cache, §4.4)\n\nSFT samples made from the real answers of a toolenv store, with the exact system prompt of Table 10, ")
	fmt.Fprintf(&b, "to fine-tune a simulator on the calls a benchmark makes (the paper's MirrorAPI-Cache).\n\n")
	fmt.Fprintf(&b, "| | entries |\n|---|---|\n| read | %s |\n| training samples (`%s`, `%s`) | %s |\n| held out (`%s`, `%s`) | %s |\n",
		thousands(st.Entries), FileTrainOpenAI, FileTrainShareGPT, thousands(st.Train), FileCacheTest, FileCacheTestMessages, thousands(st.Test))
	for _, k := range sortedKeys(st.Skipped) {
		fmt.Fprintf(&b, "| skipped: %s | %s |\n", k, thousands(st.Skipped[k]))
	}
	fmt.Fprintf(&b, "\nOrigins used: %s. Seed %d. Score a simulator on the held-out entries with `toolenv eval fidelity --pairs %s ...`.\n", strings.Join(opts.Origins, ", "), opts.Seed, FileCacheTest)
	if err := toolenv.WriteFileAtomic(filepath.Join(opts.Out, FileCard), []byte(b.String())); err != nil {
		return nil, err
	}
	return st, writeDatasetInfo(opts.Out)
}

// heldKey is a candidate for the held-out set.
type heldKey struct {
	h   int64
	key PairKey
}

func (a heldKey) less(b heldKey) bool {
	if a.h != b.h {
		return a.h < b.h
	}
	if a.key.Tool != b.key.Tool {
		return a.key.Tool < b.key.Tool
	}
	return a.key.Args < b.key.Args
}

// keyHeap is a max-heap of held keys: its top is the largest kept.
type keyHeap []heldKey

func (h keyHeap) Len() int           { return len(h) }
func (h keyHeap) Less(i, j int) bool { return h[j].less(h[i]) }
func (h keyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keyHeap) Push(x any)        { *h = append(*h, x.(heldKey)) }
func (h *keyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
