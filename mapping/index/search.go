package index

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/embed"
	"github.com/toolenv/toolenv/mapping/terms"
)

// Mode is how a search ranks tools.
type Mode string

// The search modes.
const (
	// Hybrid fuses the lexical and vector rankings (reciprocal rank
	// fusion); it is the default when the index has vectors.
	Hybrid Mode = "hybrid"
	// Lexical ranks by BM25 over the FTS5 columns.
	Lexical Mode = "lexical"
	// Vector ranks by cosine similarity of the embeddings.
	Vector Mode = "vector"
)

// maxQueryTerms bounds the terms of a lexical query; a longer query is
// cut (a pasted document must not become a thousand-term OR).
const maxQueryTerms = 64

// rrfK is the constant of reciprocal rank fusion (Cormack et al., 2009).
const rrfK = 60

// bm25Weights weigh the FTS5 columns: name, title, description, params,
// outputs, grp, canon.
const bm25Weights = "3.0, 3.0, 2.0, 1.0, 1.0, 0.5, 1.0"

// SearchOptions adjust a search.
type SearchOptions struct {
	// Mode is Hybrid, Lexical or Vector; empty means Hybrid when the
	// index has vectors, else Lexical.
	Mode Mode
	// Collections restricts the results to these collections.
	Collections []string
	// MinAlternative is the lowest mapping score an alternative needs
	// (human and manifest mappings need none); 0 means 0.6.
	MinAlternative float64
	// MaxAlternatives bounds the alternatives of each hit; 0 means 5,
	// negative none.
	MaxAlternatives int
}

// Results are a search's answer.
type Results struct {
	Query string `json:"query"`
	// Mode is the mode actually used (a hybrid search that fell back is
	// Lexical).
	Mode Mode `json:"mode"`
	// Notes say why the search fell back, if it did.
	Notes []string `json:"notes,omitempty"`
	Hits  []Hit    `json:"hits"`
}

// Hit is one tool found.
type Hit struct {
	Rank        int    `json:"rank"`
	ID          string `json:"id"`
	Collection  string `json:"collection"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Score is what the hits are ranked by: the fused score (hybrid),
	// the BM25 score (lexical) or the cosine similarity (vector).
	Score float64 `json:"score"`
	// BM25 (higher is better) and Cosine are the two rankings' scores;
	// LexicalRank and VectorRank the tool's rank in each (0: absent).
	BM25        float64 `json:"bm25,omitempty"`
	Cosine      float64 `json:"cosine,omitempty"`
	LexicalRank int     `json:"lexical_rank,omitempty"`
	VectorRank  int     `json:"vector_rank,omitempty"`
	// Alternatives are the tools mapped to this one, best first.
	Alternatives []Alternative `json:"alternatives,omitempty"`
}

// Alternative is a tool that can stand in for a hit.
type Alternative struct {
	ID         string             `json:"id"`
	Score      float64            `json:"score"`
	Provenance mapping.Provenance `json:"provenance"`
	// Fields is how many arguments and response fields are aligned.
	Fields int `json:"fields"`
}

// ErrEmptyQuery is returned for a query with no searchable words.
var ErrEmptyQuery = errors.New("the query has no searchable words")

// Search returns the k tools best matching query, each with its
// alternatives.
func (ix *Index) Search(ctx context.Context, query string, k int, opts SearchOptions) (*Results, error) {
	if k <= 0 {
		k = 10
	}
	if len(ix.tools) == 0 {
		return nil, fmt.Errorf("search: the index at %s holds no tools; rebuild it with `toolenv map index --collection DIR`", ix.path)
	}
	res := &Results{Query: query, Mode: opts.Mode}
	if res.Mode == "" {
		// Hybrid only pays with a real embedding model: with the offline
		// hash embedder it ranks worse than BM25 alone (recall@10 on the
		// 598 StableToolBench queries: 0.625 against 0.661).
		// So the default is lexical exactly when the index holds hash
		// vectors and no embedder was configured to open it; otherwise
		// hybrid (which explains itself when it must fall back).
		res.Mode = Hybrid
		if ix.emb == nil && strings.HasPrefix(ix.meta.Embedder, "hash-") {
			res.Mode = Lexical
		}
	}
	allowed := func(id string) bool { return true }
	if len(opts.Collections) > 0 {
		set := map[string]bool{}
		for _, c := range opts.Collections {
			set[c] = true
		}
		known := false
		for _, c := range ix.meta.Collections {
			known = known || set[c]
		}
		if !known {
			return nil, fmt.Errorf("search: the index holds collections %v, none of %v", ix.meta.Collections, opts.Collections)
		}
		allowed = func(id string) bool { return set[ix.byID[id].Collection] }
	}
	n := max(4*k, 50)
	var lex, vec []scored
	var err error
	if res.Mode != Vector {
		lex, err = ix.lexical(ctx, query, n, allowed)
		if err != nil && !(errors.Is(err, ErrEmptyQuery) && res.Mode == Hybrid) {
			return nil, err
		}
	}
	if res.Mode != Lexical {
		var note string
		vec, note = ix.vector(ctx, query, n, allowed)
		if note != "" {
			res.Notes = append(res.Notes, note)
			if res.Mode == Vector {
				return nil, fmt.Errorf("search: %s", note)
			}
			res.Mode = Lexical
			vec = nil
		}
	}
	if res.Mode == Hybrid && errors.Is(err, ErrEmptyQuery) && len(vec) == 0 {
		return nil, err
	}
	res.Hits = ix.fuse(res.Mode, lex, vec, k)
	for i := range res.Hits {
		res.Hits[i].Alternatives = ix.alternatives(res.Hits[i].ID, opts)
	}
	return res, nil
}

type scored struct {
	id    string
	score float64
}

// lexical ranks by BM25 over all columns, the query's words also matched
// as canonical words (so "fetch" finds "get").
func (ix *Index) lexical(ctx context.Context, query string, n int, allowed func(string) bool) ([]scored, error) {
	var words []string
	seen := map[string]bool{}
	for _, w := range terms.Split(query) {
		if len(w) < 2 && !(len(w) == 1 && w[0] >= '0' && w[0] <= '9') {
			continue
		}
		if !seen[w] {
			seen[w] = true
			words = append(words, quoteFTS(w))
		}
	}
	for _, w := range terms.Text(query) {
		if !seen["canon:"+w] {
			seen["canon:"+w] = true
			words = append(words, "canon : "+quoteFTS(w))
		}
	}
	if len(words) == 0 {
		return nil, ErrEmptyQuery
	}
	if len(words) > maxQueryTerms {
		words = words[:maxQueryTerms]
	}
	q := strings.Join(words, " OR ")
	rows, err := ix.db.QueryContext(ctx, `SELECT rowid, -bm25(fts, `+bm25Weights+`) AS s FROM fts WHERE fts MATCH ? ORDER BY s DESC, rowid LIMIT ?`, q, n*3)
	if err != nil {
		return nil, fmt.Errorf("search: lexical query %q: %w", q, err)
	}
	defer rows.Close()
	var out []scored
	for rows.Next() {
		var row int64
		var s float64
		if err := rows.Scan(&row, &s); err != nil {
			return nil, err
		}
		id := ix.idOf[row]
		if id == "" || !allowed(id) {
			continue
		}
		out = append(out, scored{id, s})
		if len(out) == n {
			break
		}
	}
	return out, rows.Err()
}

// vector ranks by cosine similarity; a non-empty note says why it could
// not.
func (ix *Index) vector(ctx context.Context, query string, n int, allowed func(string) bool) ([]scored, string) {
	if ix.vecs == nil {
		note := "the index has no vectors"
		if ix.meta.VectorNote != "" {
			note = ix.meta.VectorNote
		}
		return nil, note + "; lexical results only"
	}
	emb := ix.emb
	if emb == nil && strings.HasPrefix(ix.meta.Embedder, "hash-v1-") {
		emb = embed.Hash{Dims: ix.meta.Dims}
	}
	if emb == nil {
		return nil, fmt.Sprintf("the index's vectors come from %s and no embeddings endpoint is configured to embed the query (--embed-url, --embed-model); lexical results only", ix.meta.Embedder)
	}
	if emb.Name() != ix.meta.Embedder {
		return nil, fmt.Sprintf("the index's vectors come from %s but queries would be embedded with %s (another model's vectors are not comparable); lexical results only — rebuild the index or use its model", ix.meta.Embedder, emb.Name())
	}
	vs, err := emb.Embed(ctx, []string{query})
	if err != nil || len(vs) != 1 {
		return nil, fmt.Sprintf("the embeddings endpoint failed (%v); lexical results only", err)
	}
	if len(vs[0]) != ix.meta.Dims {
		return nil, fmt.Sprintf("the query vector has %d dimensions, the index's %d; lexical results only", len(vs[0]), ix.meta.Dims)
	}
	count := ix.vecs.Count()
	want := min(n, count)
	if len(ix.meta.Collections) > 1 {
		want = count // filtering may drop many
	}
	rs, err := ix.vecs.QueryEmbedding(ctx, vs[0], want, nil, nil)
	if err != nil {
		return nil, fmt.Sprintf("vector search failed (%v); lexical results only", err)
	}
	out := make([]scored, 0, n)
	for _, r := range rs {
		id := ix.idOf[rowID(r.ID)]
		if id == "" || !allowed(id) {
			continue
		}
		out = append(out, scored{id, float64(r.Similarity)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id < out[j].id
	})
	if len(out) > n {
		out = out[:n]
	}
	return out, ""
}

// fuse merges the rankings into the top k hits.
func (ix *Index) fuse(mode Mode, lex, vec []scored, k int) []Hit {
	hits := map[string]*Hit{}
	get := func(id string) *Hit {
		h, ok := hits[id]
		if !ok {
			t := ix.byID[id]
			h = &Hit{ID: id, Collection: t.Collection, Name: t.Name, Title: t.Title, Description: t.Description}
			hits[id] = h
		}
		return h
	}
	for i, s := range lex {
		h := get(s.id)
		h.BM25, h.LexicalRank = round4(s.score), i+1
		if mode == Lexical {
			h.Score = h.BM25
		} else {
			h.Score += 1.0 / float64(rrfK+i+1)
		}
	}
	for i, s := range vec {
		h := get(s.id)
		h.Cosine, h.VectorRank = round4(s.score), i+1
		if mode == Vector {
			h.Score = h.Cosine
		} else {
			h.Score += 1.0 / float64(rrfK+i+1)
		}
	}
	out := make([]Hit, 0, len(hits))
	for _, h := range hits {
		if mode == Hybrid {
			h.Score = round4(h.Score * 1000) // RRF scores are tiny; per mille reads better
		}
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID < out[j].ID
	})
	if len(out) > k {
		out = out[:k]
	}
	for i := range out {
		out[i].Rank = i + 1
	}
	return out
}

func round4(x float64) float64 {
	if x < 0 {
		return -round4(-x)
	}
	return float64(int64(x*10000+0.5)) / 10000
}

// alternatives lists the tools mapped to id, then the rest of its
// cluster.
func (ix *Index) alternatives(id string, opts SearchOptions) []Alternative {
	maxN := opts.MaxAlternatives
	if maxN == 0 {
		maxN = 5
	}
	if maxN < 0 || ix.set == nil {
		return nil
	}
	minScore := opts.MinAlternative
	if minScore <= 0 {
		minScore = 0.6
	}
	var out []Alternative
	seen := map[string]bool{id: true}
	for _, m := range ix.set.Alternatives(id) {
		if m.Score < minScore && m.Provenance != mapping.Human && m.Provenance != mapping.Manifest {
			continue
		}
		seen[m.To] = true
		out = append(out, Alternative{ID: m.To, Score: m.Score, Provenance: m.Provenance, Fields: len(m.Inputs) + len(m.Outputs)})
	}
	for _, t := range ix.set.Cluster(id) {
		if !seen[t] {
			seen[t] = true
			out = append(out, Alternative{ID: t, Provenance: "cluster"})
		}
	}
	if len(out) > maxN {
		out = out[:maxN]
	}
	return out
}
