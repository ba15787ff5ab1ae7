package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping/index"
)

// IndexSearchOptions configure NewIndexSearch.
type IndexSearchOptions struct {
	// Dir holds the index files, one per set of tools (named by a hash of
	// what is indexed, so a restart over the same tools reuses its
	// index); empty means the user cache folder's toolenv/search, else a
	// temporary folder.
	Dir string
	// Embedder, when set, adds vectors to the index and hybrid search
	// (BM25 and cosine fused); nil means BM25 only.
	Embedder index.Embedder
	// Keep is how many index files Dir keeps (the newest); default 8.
	Keep int
	// Logger logs builds; nil discards.
	Logger *slog.Logger
}

// IndexSearch is the ToolSearch of toolenv's tool index
// (mapping/index): an index file of the tools is built (or reused) in the
// background, once Eager was called or on the first Search after an
// Update, and a Search waits for it.
type IndexSearch struct {
	opts IndexSearchOptions
	log  *slog.Logger

	mu    sync.Mutex
	cur   *searchGen
	eager bool // build at every Update, not at the first search

	ctx    context.Context // of the builds; Close cancels it
	cancel context.CancelFunc
}

// searchGen is the index of one Update, built when first searched.
type searchGen struct {
	tools []*toolenv.Tool // sorted by ID
	begin sync.Once
	done  chan struct{}
	ix    *index.Index
	err   error
	start time.Time
	use   sync.RWMutex // held for reading by searches, for writing by close

	warned atomic.Bool // a fallback to BM25 was logged
}

var _ ToolSearch = (*IndexSearch)(nil)

// NewIndexSearch returns an IndexSearch; it indexes nothing until Update.
func NewIndexSearch(opts IndexSearchOptions) *IndexSearch {
	if opts.Keep <= 0 {
		opts.Keep = 8
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &IndexSearch{opts: opts, log: log, ctx: ctx, cancel: cancel}
}

// Update hands over the tools to search. Before Eager they are indexed
// when a search first needs them (the first search waits for the index,
// seconds at 50,000 tools, unless an index of the same tools is on disk
// from an earlier run); after Eager at once, in the background. The
// previous index serves no more searches once the new one is ready.
func (s *IndexSearch) Update(tools []*toolenv.Tool) {
	// Tools by ID through a sorted copy of the slice: no map of 50,000.
	byID := append([]*toolenv.Tool(nil), tools...)
	sort.Slice(byID, func(i, j int) bool { return byID[i].ID < byID[j].ID })
	g := &searchGen{tools: byID, done: make(chan struct{})}
	s.mu.Lock()
	prev := s.cur
	s.cur = g
	eager := s.eager
	s.mu.Unlock()
	if eager {
		s.build(g)
	}
	if prev != nil {
		go func() {
			prev.begin.Do(func() { close(prev.done) }) // never built: nothing to wait for
			<-prev.done
			prev.close()
		}()
	}
}

// Eager starts building the index of the tools of the last Update in the
// background now, and that of every later Update as soon as it comes,
// instead of at the first search. A server calls it once it is ready
// (listening), so that the build (seconds of CPU at 50,000 tools) does
// not delay its start and the first search_tools finds the index built or
// nearly; a search made before the build is done waits for it, so it is
// never answered from a partial index.
func (s *IndexSearch) Eager() {
	s.mu.Lock()
	s.eager = true
	g := s.cur
	s.mu.Unlock()
	if g != nil {
		s.build(g)
	}
}

// build indexes g's tools, once, in the background.
func (s *IndexSearch) build(g *searchGen) {
	g.begin.Do(func() {
		g.start = time.Now()
		go func() {
			defer close(g.done)
			defer func() {
				// A bug in the index build must not take the server
				// down: search_tools answers with the error.
				if p := recover(); p != nil {
					g.ix, g.err = nil, fmt.Errorf("internal error while building the tool search index (a bug in toolenv): %v", p)
					s.log.Error("panic while building the tool search index", "panic", p, "stack", string(debug.Stack()))
				}
			}()
			g.ix, g.err = s.open(g.tools)
			if g.err != nil {
				s.log.Error("tool search index failed; search_tools answers with the error", "err", g.err)
			} else {
				s.log.Info("tool search index ready", "tools", len(g.tools), "path", g.ix.Path(), "elapsed", time.Since(g.start).Round(time.Millisecond))
			}
			// Building leaves garbage the size of what it wrote (the
			// tools' search documents, SQLite's buffers); give it back
			// now rather than holding it resident until the scavenger
			// does.
			debug.FreeOSMemory()
		}()
	})
}

func (g *searchGen) close() {
	g.use.Lock()
	defer g.use.Unlock()
	if g.ix != nil {
		g.ix.Close()
		g.ix = nil
		g.err = errors.New("the tool index was replaced; search again")
	}
}

// open reuses the index file of exactly these tools, or builds it.
func (s *IndexSearch) open(byID []*toolenv.Tool) (*index.Index, error) {
	tools := byID
	dir := s.opts.Dir
	if dir == "" {
		if d, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(d, "toolenv", "search")
		} else {
			dir = filepath.Join(os.TempDir(), "toolenv-search")
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tool search: %w", err)
	}
	emb := ""
	if s.opts.Embedder != nil {
		emb = s.opts.Embedder.Name()
	}
	path := filepath.Join(dir, fingerprint(byID, emb)+".db")
	resolve := func(id string) *toolenv.Tool {
		i := sort.Search(len(byID), func(i int) bool { return byID[i].ID >= id })
		if i < len(byID) && byID[i].ID == id {
			return byID[i]
		}
		return nil
	}
	ctx := s.ctx
	if ix, err := index.Open(ctx, path, index.OpenOptions{Embedder: s.opts.Embedder, Tools: resolve, Logger: s.log}); err == nil {
		if s.opts.Embedder == nil || ix.Meta().Embedder != "" {
			now := time.Now()
			os.Chtimes(path, now, now) // the newest is kept
			return ix, nil
		}
		// Built while the embeddings endpoint was down: try again.
		s.log.Info("the tool search index on disk has no vectors (the embeddings endpoint failed when it was built); building it again", "path", path, "note", ix.Meta().VectorNote)
		ix.Close()
	}
	if len(tools) == 0 {
		return nil, errors.New("there are no listed tools to search")
	}
	if _, err := index.Build(ctx, path, tools, index.BuildOptions{Embedder: s.opts.Embedder, NoVectors: s.opts.Embedder == nil, NoDocs: true, Logger: s.log}); err != nil {
		return nil, fmt.Errorf("tool search: %w", err)
	}
	s.prune(dir, path)
	return index.Open(ctx, path, index.OpenOptions{Embedder: s.opts.Embedder, Tools: resolve, Logger: s.log})
}

// prune removes all but the newest Keep index files of dir.
func (s *IndexSearch) prune(dir, keep string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.db"))
	type file struct {
		path string
		mod  time.Time
	}
	var fs []file
	for _, p := range files {
		if st, err := os.Stat(p); err == nil && p != keep {
			fs = append(fs, file{p, st.ModTime()})
		}
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].mod.After(fs[j].mod) })
	for i := s.opts.Keep - 1; i < len(fs); i++ {
		os.Remove(fs[i].path)
	}
}

// Search implements ToolSearch.
func (s *IndexSearch) Search(ctx context.Context, query string, k int, collection string) ([]string, []string, error) {
	s.mu.Lock()
	g := s.cur
	s.mu.Unlock()
	if g == nil {
		return nil, nil, errors.New("no tools are indexed yet")
	}
	s.build(g)
	select {
	case <-g.done:
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("the tool index is still being built (since %s ago): %w", time.Since(g.start).Round(time.Second), ctx.Err())
	}
	g.use.RLock()
	defer g.use.RUnlock()
	if g.err != nil {
		return nil, nil, g.err
	}
	opts := index.SearchOptions{}
	if s.opts.Embedder == nil {
		opts.Mode = index.Lexical
	}
	if collection != "" {
		opts.Collections = []string{collection}
	}
	res, err := g.ix.Search(ctx, query, k, opts)
	if err != nil {
		return nil, nil, err
	}
	if s.opts.Embedder != nil && len(res.Notes) > 0 && g.warned.CompareAndSwap(false, true) {
		s.log.Warn("search_tools ranks by BM25 alone (logged once per index)", "embedder", s.opts.Embedder.Name(), "why", strings.Join(res.Notes, "; "))
	}
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.ID
	}
	return ids, res.Notes, nil
}

// Close closes the current index.
func (s *IndexSearch) Close() error {
	s.mu.Lock()
	g := s.cur
	s.cur = nil
	s.mu.Unlock()
	s.cancel() // a build under way stops
	if g != nil {
		g.begin.Do(func() { close(g.done) })
		<-g.done
		g.close()
	}
	return nil
}

// fingerprint names an index by what it indexes: the index format, the
// embedder, and every part of each tool the index reads (the tools sorted
// by ID).
func fingerprint(sorted []*toolenv.Tool, embedder string) string {
	h := sha256.New()
	var buf []byte // reused: hashing 50,000 tools makes no garbage
	put := func(s string) {
		buf = strconv.AppendInt(buf[:0], int64(len(s)), 10)
		buf = append(append(buf, ':'), s...)
		h.Write(buf)
	}
	put(strconv.Itoa(index.Format))
	put(embedder)
	for _, t := range sorted {
		for _, s := range []string{t.ID, t.Collection, t.Name, t.Title, t.Description, t.Group, t.Category, t.GroupDescription} {
			put(s)
		}
		for _, n := range t.Input.Order {
			if p := t.Input.Properties[n]; p != nil {
				put(n)
				put(p.Description)
			}
		}
		if t.Output != nil {
			for _, n := range t.Output.Names() {
				put(n)
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
