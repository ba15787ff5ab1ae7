package environment_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/nl2api"
)

// messages records what is logged.
type messages struct {
	mu  sync.Mutex
	all []string
}

func (m *messages) Enabled(context.Context, slog.Level) bool { return true }
func (m *messages) Handle(_ context.Context, r slog.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.all = append(m.all, r.Message)
	return nil
}
func (m *messages) WithAttrs([]slog.Attr) slog.Handler { return m }
func (m *messages) WithGroup(string) slog.Handler      { return m }
func (m *messages) count(msg string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, s := range m.all {
		if s == msg {
			n++
		}
	}
	return n
}

// TestImageCacheKey: the image_cache key names the folder the NL2SQL
// collections' indexed databases are kept in; two collections over one
// database in one environment index it once; a second environment reads
// the image; "off" writes nothing; the answers are the same each way.
func TestImageCacheKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeBird(filepath.Join(dir, "bird"))
	out := filepath.Join(dir, "out")
	if _, err := nl2api.Build(ctx, nl2api.Options{Data: filepath.Join(dir, "bird"), Out: out, Flavors: []string{nl2api.Rest, nl2api.Slot}}); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "images")
	serve := func(imageCache string) (*messages, string) {
		t.Helper()
		log := &messages{}
		env, err := environment.Open(ctx, &environment.Config{Collections: []string{filepath.Join(out, "rest"), filepath.Join(out, "slot")},
			ImageCache: imageCache, Logger: slog.New(log)})
		if err != nil {
			t.Fatal(err)
		}
		defer env.Close()
		call, res := env.Registry.NewCall("bird-rest", "get_price_by_product_name", map[string]any{"product_name": "kettle"})
		if res != nil {
			t.Fatalf("call: %s", res.Body)
		}
		res = env.Pipeline.Invoke(ctx, call)
		return log, string(res.Body)
	}
	images := func() int {
		m, _ := filepath.Glob(filepath.Join(cache, "*.img"))
		return len(m)
	}
	log, first := serve(cache)
	if !strings.Contains(first, "25.5") {
		t.Fatalf("answer %s, want the kettle's price", first)
	}
	if log.count("database image cached") != 1 || log.count("database image from the cache") != 0 || images() != 1 {
		t.Fatalf("first environment: %d stored, %d read, %d files; want the database indexed once for both collections",
			log.count("database image cached"), log.count("database image from the cache"), images())
	}
	log, again := serve(cache)
	if log.count("database image cached") != 0 || log.count("database image from the cache") != 1 || again != first {
		t.Fatalf("second environment: %d stored, %d read, answer %s; want the image read and the same answer",
			log.count("database image cached"), log.count("database image from the cache"), again)
	}
	if err := os.RemoveAll(cache); err != nil {
		t.Fatal(err)
	}
	log, off := serve("off")
	if _, err := os.Stat(cache); !os.IsNotExist(err) || log.count("database image cached")+log.count("database image from the cache") != 0 || off != first {
		t.Fatalf("with image_cache off: folder %v, cache used %d times, answer %s", err, log.count("database image cached")+log.count("database image from the cache"), off)
	}
}
