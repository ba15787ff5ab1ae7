package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/embed"
)

// BuildOptions configure Build.
type BuildOptions struct {
	// Embedder makes the vectors; nil means the offline embed.Hash.
	Embedder Embedder
	// NoVectors builds a lexical (BM25) index only, embedding nothing:
	// for a server that has no embedding model and many tools.
	NoVectors bool
	// NoDocs leaves the tools' JSON out of the file: the index can then
	// only be opened over the caller's own tools (OpenOptions.Tools).
	NoDocs bool
	// Mappings and clusters to store with the index (structural ones,
	// typically); may be nil.
	Mappings *mapping.Set
	// Outputs returns the output field paths of a tool (the structural
	// profile's); nil indexes the output schema's properties only.
	Outputs func(*toolenv.Tool) []string
	// Progress is told how many tools were embedded; may be nil.
	Progress func(done, total int)
	// Logger logs the build; nil discards.
	Logger *slog.Logger
}

// Report says what Build did.
type Report struct {
	Meta
	Path string `json:"path"`
	// Elapsed is the whole build; EmbedElapsed the part spent embedding.
	Elapsed      time.Duration `json:"elapsed_ns"`
	EmbedElapsed time.Duration `json:"embed_elapsed_ns"`
}

// Build indexes tools into a new index file at path, replacing any there.
// Tool IDs must be unique. When the embedder fails, the index is built
// without vectors (lexical search only) and the report's VectorNote says
// why; it is not an error.
func Build(ctx context.Context, path string, tools []*toolenv.Tool, opts BuildOptions) (*Report, error) {
	start := time.Now()
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if len(tools) == 0 {
		return nil, fmt.Errorf("build index: no tools to index; pass collections with --collection, --toolbench, --openapi or --demo")
	}
	emb := opts.Embedder
	if emb == nil {
		emb = embed.Hash{}
	}
	sorted := append([]*toolenv.Tool(nil), tools...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].ID == sorted[i-1].ID {
			return nil, fmt.Errorf("build index: tool %s is given twice (two collections of one name?)", sorted[i].ID)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("build index: %w", err)
	}
	tmp := path + ".building"
	os.Remove(tmp)
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(tmp)+"?_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)")
	if err != nil {
		return nil, fmt.Errorf("build index: %w", err)
	}
	db.SetMaxOpenConns(1)
	fail := func(err error) (*Report, error) {
		db.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("build index %s: %w", path, err)
	}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return fail(fmt.Errorf("create tables (does this SQLite have FTS5?): %w", err))
	}
	// No merging of the full-text index's segments while it is written:
	// 'optimize' merges them all once at the end (a fifth less time for
	// 50,000 tools than merging as it goes); the defaults are set back
	// after.
	if _, err := db.ExecContext(ctx, `INSERT INTO fts(fts, rank) VALUES ('automerge', 0); INSERT INTO fts(fts, rank) VALUES ('crisismerge', 100000)`); err != nil {
		return fail(err)
	}
	docFor := func(t *toolenv.Tool) document {
		var outs []string
		if opts.Outputs != nil {
			outs = opts.Outputs(t)
		} else if t.Output != nil {
			outs = t.Output.Names()
		}
		return docOf(t, outs)
	}
	meta := Meta{Format: Format, Tools: len(sorted), Collections: mapping.CollectionsOf(sorted), Built: time.Now().UTC().Truncate(time.Second), NoDocs: opts.NoDocs}
	embedStart := time.Now()
	var vecs [][]float32
	if !opts.NoVectors {
		// Embedding goes in batches: every document first.
		docs := make([]document, len(sorted))
		for i, t := range sorted {
			docs[i] = docFor(t)
		}
		vecs, err = embedAll(ctx, emb, docs, opts.Progress)
	}
	embedElapsed := time.Since(embedStart)
	switch {
	case opts.NoVectors:
		meta.VectorNote = "built without vectors (no embedding model configured): lexical (BM25) search only"
	case err != nil:
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		meta.VectorNote = fmt.Sprintf("no vectors: the embedder %s failed (%v); the index serves lexical (BM25) search only — rebuild when the endpoint is up", emb.Name(), err)
		log.Warn("embeddings unavailable; building a lexical-only index", "embedder", emb.Name(), "err", err)
		vecs = nil
	default:
		meta.Embedder = emb.Name()
		if len(vecs) > 0 {
			meta.Dims = len(vecs[0])
		}
	}

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	var stmts [3]*sql.Stmt
	for i, q := range []string{
		`INSERT INTO tools (rowid, id, collection, doc) VALUES (?, ?, ?, ?)`,
		`INSERT INTO fts (rowid, name, title, description, params, outputs, grp, canon) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		`INSERT INTO vectors (rowid, vec) VALUES (?, ?)`,
	} {
		if stmts[i], err = tx.PrepareContext(ctx, q); err != nil {
			tx.Rollback()
			return fail(err)
		}
	}
	insTool, insFTS, insVec := stmts[0], stmts[1], stmts[2]
	// The documents are made again rather than kept (50,000 of them
	// weigh), by a goroutine a little ahead of the inserts: on another
	// core, making them (a quarter of the build) overlaps SQLite's work.
	made := make(chan document, 256)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(made)
		for _, t := range sorted {
			select {
			case made <- docFor(t):
			case <-stop:
				return
			}
		}
	}()
	for i, t := range sorted {
		row := int64(i + 1)
		raw := []byte{}
		if !opts.NoDocs {
			if raw, err = toolenv.MarshalJSONNoHTML(t); err != nil {
				tx.Rollback()
				return fail(fmt.Errorf("tool %s: %w", t.ID, err))
			}
		}
		d := <-made
		if _, err := insTool.ExecContext(ctx, row, t.ID, t.Collection, string(raw)); err != nil {
			tx.Rollback()
			return fail(err)
		}
		if _, err := insFTS.ExecContext(ctx, row, d.name, d.title, d.description, d.params, d.outputs, d.group, d.canon); err != nil {
			tx.Rollback()
			return fail(err)
		}
		if vecs != nil {
			if _, err := insVec.ExecContext(ctx, row, encodeVector(vecs[i])); err != nil {
				tx.Rollback()
				return fail(err)
			}
		}
	}
	if opts.Mappings != nil {
		if err := writeMappings(ctx, tx, opts.Mappings); err != nil {
			tx.Rollback()
			return fail(err)
		}
		meta.Mappings = len(opts.Mappings.Mappings)
		meta.Clusters = len(opts.Mappings.Clusters)
	}
	mj, _ := json.Marshal(meta)
	if _, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('meta', ?)`, string(mj)); err != nil {
		tx.Rollback()
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO fts(fts) VALUES ('optimize'); INSERT INTO fts(fts, rank) VALUES ('automerge', 4); INSERT INTO fts(fts, rank) VALUES ('crisismerge', 16)`); err != nil {
		return fail(err)
	}
	if err := db.Close(); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("build index %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("build index %s: %w", path, err)
	}
	log.Info("tool index built", "path", path, "tools", meta.Tools, "embedder", meta.Embedder, "mappings", meta.Mappings, "elapsed", time.Since(start).Round(time.Millisecond))
	return &Report{Meta: meta, Path: path, Elapsed: time.Since(start), EmbedElapsed: embedElapsed}, nil
}

// embedAll embeds every document in batches of 64, reporting progress.
func embedAll(ctx context.Context, emb Embedder, docs []document, progress func(int, int)) ([][]float32, error) {
	const batch = 64
	out := make([][]float32, 0, len(docs))
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.text()
	}
	for i := 0; i < len(texts); i += batch {
		j := min(i+batch, len(texts))
		vs, err := emb.Embed(ctx, texts[i:j])
		if err != nil {
			return nil, err
		}
		if len(vs) != j-i {
			return nil, fmt.Errorf("%d vectors for %d texts", len(vs), j-i)
		}
		for _, v := range vs {
			if len(out) > 0 && len(v) != len(out[0]) || len(v) == 0 {
				return nil, fmt.Errorf("vectors of different sizes (%d, %d)", len(out[0]), len(v))
			}
			out = append(out, v)
		}
		if progress != nil {
			progress(j, len(texts))
		}
	}
	return out, nil
}

func writeMappings(ctx context.Context, tx *sql.Tx, set *mapping.Set) error {
	ins, err := tx.PrepareContext(ctx, `INSERT INTO mappings (from_id, to_id, provenance, score, doc) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	for _, m := range set.Mappings {
		raw, err := toolenv.MarshalJSONNoHTML(m)
		if err != nil {
			return err
		}
		if _, err := ins.ExecContext(ctx, m.From, m.To, string(m.Provenance), m.Score, string(raw)); err != nil {
			return err
		}
	}
	insC, err := tx.PrepareContext(ctx, `INSERT INTO clusters (cluster, tool) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	for i, c := range set.Clusters {
		for _, t := range c {
			if _, err := insC.ExecContext(ctx, i, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// rowID parses a chromem document ID back into a tool row.
func rowID(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// quoteFTS makes a word safe inside an FTS5 query.
func quoteFTS(w string) string { return `"` + strings.ReplaceAll(w, `"`, `""`) + `"` }
