package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/philippgille/chromem-go"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/terms"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, with FTS5
)

// Format is the version of the index file layout.
const Format = 1

// Embedder turns texts into vectors. embed.Hash and embed.Remote
// implement it.
type Embedder interface {
	// Name identifies the model: vectors of different names are not
	// comparable.
	Name() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Meta describes an index.
type Meta struct {
	Format int `json:"format"`
	// Embedder names the model the vectors were made with; empty when the
	// index has none.
	Embedder string `json:"embedder,omitempty"`
	Dims     int    `json:"dims,omitempty"`
	// VectorNote says why the index has no vectors, when it has none.
	VectorNote  string    `json:"vector_note,omitempty"`
	Tools       int       `json:"tools"`
	Collections []string  `json:"collections"`
	Mappings    int       `json:"mappings"`
	Clusters    int       `json:"clusters"`
	Built       time.Time `json:"built"`
	// NoDocs says the file holds no tool documents (BuildOptions.NoDocs).
	NoDocs bool `json:"no_docs,omitempty"`
}

// Index is an open index. It is safe for concurrent searches.
type Index struct {
	db    *sql.DB
	path  string
	meta  Meta
	tools []*toolenv.Tool
	byID  map[string]*toolenv.Tool
	rowOf map[string]int64
	idOf  map[int64]string
	vecs  *chromem.Collection
	set   *mapping.Set
	emb   Embedder
	log   *slog.Logger
	// resolve, when set, supplies the tools (OpenOptions.Tools).
	resolve func(id string) *toolenv.Tool
}

const schema = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tools (
	rowid      INTEGER PRIMARY KEY,
	id         TEXT NOT NULL UNIQUE,
	collection TEXT NOT NULL,
	doc        TEXT NOT NULL
);
CREATE VIRTUAL TABLE fts USING fts5(
	name, title, description, params, outputs, grp, canon,
	tokenize = 'porter unicode61'
);
CREATE TABLE vectors (rowid INTEGER PRIMARY KEY, vec BLOB NOT NULL);
CREATE TABLE mappings (
	from_id    TEXT NOT NULL,
	to_id      TEXT NOT NULL,
	provenance TEXT NOT NULL,
	score      REAL NOT NULL,
	doc        TEXT NOT NULL
);
CREATE INDEX mappings_from ON mappings(from_id);
CREATE INDEX mappings_to ON mappings(to_id);
CREATE TABLE clusters (cluster INTEGER NOT NULL, tool TEXT NOT NULL);
`

// OpenOptions configure Open.
type OpenOptions struct {
	// Embedder embeds queries; it must be the model the index was built
	// with for vector search (else Search falls back to lexical results
	// and says why). Nil means lexical search only, unless the index was
	// built with the offline embedder, which Open recreates.
	Embedder Embedder
	// Logger logs fallbacks; nil discards.
	Logger *slog.Logger
	// Tools, when set, returns the tool of an ID: the caller already
	// holds the indexed tools (a server), so Open does not decode a
	// second copy of each from the file. A tool it does not know is left
	// out of the index's results.
	Tools func(id string) *toolenv.Tool
}

// ErrNoIndex is wrapped by Open when there is no index file.
var ErrNoIndex = errors.New("no tool index")

// Open opens the index at path and loads its tools, vectors and mappings.
func Open(ctx context.Context, path string, opts OpenOptions) (*Index, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w at %s: build one with `toolenv map index --collection DIR --index %s`", ErrNoIndex, path, path)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	ix := &Index{db: db, path: path, log: opts.Logger, emb: opts.Embedder, resolve: opts.Tools}
	if ix.log == nil {
		ix.log = slog.New(slog.DiscardHandler)
	}
	if err := ix.load(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	return ix, nil
}

// Close closes the index file.
func (ix *Index) Close() error { return ix.db.Close() }

// Meta describes the index.
func (ix *Index) Meta() Meta { return ix.meta }

// Path is the index file.
func (ix *Index) Path() string { return ix.path }

// Tools returns the indexed tools, sorted by ID.
func (ix *Index) Tools() []*toolenv.Tool { return ix.tools }

// Tool returns the indexed tool with the given ID, or nil.
func (ix *Index) Tool(id string) *toolenv.Tool { return ix.byID[id] }

// Mappings returns the mappings and clusters stored with the index.
func (ix *Index) Mappings() *mapping.Set { return ix.set }

func (ix *Index) load(ctx context.Context) error {
	rows, err := ix.db.QueryContext(ctx, `SELECT key, value FROM meta`)
	if err != nil {
		return fmt.Errorf("not a toolenv tool index (%v); rebuild it with `toolenv map index`", err)
	}
	kv := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return err
		}
		kv[k] = v
	}
	rows.Close()
	if err := json.Unmarshal([]byte(kv["meta"]), &ix.meta); err != nil {
		return fmt.Errorf("the index has no readable metadata (%v); rebuild it with `toolenv map index`", err)
	}
	if ix.meta.Format != Format {
		return fmt.Errorf("index format %d, this toolenv reads format %d; rebuild it with `toolenv map index`", ix.meta.Format, Format)
	}
	if ix.meta.NoDocs && ix.resolve == nil {
		return errors.New("this index was built without tool documents, for a server's own tools (search_tools); rebuild it with `toolenv map index` to search it on its own")
	}
	ix.byID, ix.rowOf, ix.idOf = map[string]*toolenv.Tool{}, map[string]int64{}, map[int64]string{}
	if ix.resolve != nil {
		rows, err = ix.db.QueryContext(ctx, `SELECT rowid, id FROM tools ORDER BY id`)
	} else {
		rows, err = ix.db.QueryContext(ctx, `SELECT rowid, id, doc FROM tools ORDER BY id`)
	}
	if err != nil {
		return err
	}
	for rows.Next() {
		var row int64
		var id, doc string
		dest := []any{&row, &id, &doc}
		if ix.resolve != nil {
			dest = dest[:2]
		}
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return err
		}
		t := &toolenv.Tool{}
		if ix.resolve != nil {
			if t = ix.resolve(id); t == nil {
				continue
			}
		} else if err := toolenv.DecodeJSON([]byte(doc), t); err != nil {
			rows.Close()
			return fmt.Errorf("tool %s: %w", id, err)
		}
		ix.tools = append(ix.tools, t)
		ix.byID[id], ix.rowOf[id], ix.idOf[row] = t, row, id
	}
	rows.Close()
	if err := ix.loadVectors(ctx); err != nil {
		return err
	}
	return ix.loadMappings(ctx)
}

func (ix *Index) loadVectors(ctx context.Context) error {
	if ix.meta.Embedder == "" {
		return nil
	}
	db := chromem.NewDB()
	noEmbed := func(context.Context, string) ([]float32, error) {
		return nil, errors.New("the index embeds queries itself")
	}
	c, err := db.CreateCollection("tools", nil, noEmbed)
	if err != nil {
		return err
	}
	rows, err := ix.db.QueryContext(ctx, `SELECT rowid, vec FROM vectors`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var docs []chromem.Document
	for rows.Next() {
		var row int64
		var blob []byte
		if err := rows.Scan(&row, &blob); err != nil {
			return err
		}
		v, err := decodeVector(blob)
		if err != nil || len(v) != ix.meta.Dims {
			return fmt.Errorf("vector of tool row %d is damaged; rebuild the index", row)
		}
		docs = append(docs, chromem.Document{ID: strconv.FormatInt(row, 10), Embedding: v})
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, d := range docs {
		if err := c.AddDocument(ctx, d); err != nil {
			return err
		}
	}
	ix.vecs = c
	return nil
}

func (ix *Index) loadMappings(ctx context.Context) error {
	ix.set = &mapping.Set{Version: mapping.SetVersion, Collections: ix.meta.Collections}
	rows, err := ix.db.QueryContext(ctx, `SELECT doc FROM mappings ORDER BY from_id, to_id, provenance`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var doc string
		if err := rows.Scan(&doc); err != nil {
			rows.Close()
			return err
		}
		var m mapping.Mapping
		if err := toolenv.DecodeJSON([]byte(doc), &m); err != nil {
			rows.Close()
			return fmt.Errorf("stored mapping: %w", err)
		}
		ix.set.Mappings = append(ix.set.Mappings, &m)
	}
	rows.Close()
	rows, err = ix.db.QueryContext(ctx, `SELECT cluster, tool FROM clusters ORDER BY cluster, tool`)
	if err != nil {
		return err
	}
	defer rows.Close()
	last := -1
	for rows.Next() {
		var c int
		var tool string
		if err := rows.Scan(&c, &tool); err != nil {
			return err
		}
		if c != last {
			ix.set.Clusters = append(ix.set.Clusters, nil)
			last = c
		}
		ix.set.Clusters[len(ix.set.Clusters)-1] = append(ix.set.Clusters[len(ix.set.Clusters)-1], tool)
	}
	return rows.Err()
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, errors.New("vector blob length is not a multiple of 4")
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// document renders the parts of a tool the index searches.
type document struct {
	name, title, description, params, outputs, group, canon string
}

func docOf(t *toolenv.Tool, outputs []string) document {
	var params []string
	for _, n := range t.Input.Names() {
		p := t.Input.Properties[n]
		params = append(params, terms.JoinWords(n))
		if p.Description != "" {
			params = append(params, p.Description)
		}
	}
	var outs []string
	for _, o := range outputs {
		outs = append(outs, terms.JoinWords(o))
	}
	name := t.Name
	if i := strings.LastIndex(name, "_for_"); i > 0 && t.Group != "" {
		name = name[:i]
	}
	d := document{
		name:        terms.JoinWords(name),
		title:       t.Title,
		description: t.Description,
		params:      strings.Join(params, " . "),
		outputs:     strings.Join(outs, " "),
		group:       strings.TrimSpace(t.Group + " " + t.Category + " " + t.GroupDescription),
	}
	d.canon = terms.JoinText(d.name, d.title, d.description, d.params, d.outputs)
	return d
}

// text is the document as one passage, for embedding.
func (d document) text() string {
	var b strings.Builder
	for _, part := range []struct{ label, s string }{
		{"", d.title}, {"", d.name}, {"", d.description}, {"parameters:", d.params}, {"returns:", d.outputs}, {"api:", d.group},
	} {
		if strings.TrimSpace(part.s) == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		if part.label != "" {
			b.WriteString(part.label + " ")
		}
		b.WriteString(part.s)
	}
	return b.String()
}
