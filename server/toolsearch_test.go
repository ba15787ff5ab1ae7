package server

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	toolenv "github.com/toolenv/toolenv"
)

// builtGen waits until the index of s's current tools is built and
// returns its error; it fails the test when the build never ends.
func builtGen(t *testing.T, s *IndexSearch) error {
	t.Helper()
	s.mu.Lock()
	g := s.cur
	s.mu.Unlock()
	select {
	case <-g.done:
		return g.err
	case <-time.After(2 * time.Minute): // a liveness guard, not a speed bound
		t.Fatal("the index build never ended")
		return nil
	}
}

// started reports whether the build of s's current tools has begun.
func started(s *IndexSearch) bool {
	s.mu.Lock()
	g := s.cur
	s.mu.Unlock()
	ran := true
	g.begin.Do(func() { ran = false; close(g.done) }) // not begun: mark it so, the test ends here
	return ran
}

// TestIndexSearchEager: before Eager an Update indexes nothing (the
// first search builds); Eager builds the index of the current tools in the
// background with no search, and every later Update's at once; searches
// then answer from the new tools, never the replaced ones.
func TestIndexSearchEager(t *testing.T) {
	tools := demoCollection(t).Tools
	dir := t.TempDir()

	lazy := NewIndexSearch(IndexSearchOptions{Dir: t.TempDir()})
	defer lazy.Close()
	lazy.Update(tools)
	if started(lazy) {
		t.Fatal("a lazy IndexSearch began building at Update, before any search")
	}

	s := NewIndexSearch(IndexSearchOptions{Dir: dir})
	defer s.Close()
	s.Update(tools)
	s.Eager()
	if err := builtGen(t, s); err != nil {
		t.Fatalf("eager build: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.db"))
	if len(files) != 1 {
		t.Fatalf("index files after the eager build, with no search: %v", files)
	}
	ids, _, err := s.Search(context.Background(), "weather forecast for the next days", 3, "")
	if err != nil || len(ids) == 0 || ids[0] != "demo/weather_forecast" {
		t.Fatalf("search after the eager build: %v %v", ids, err)
	}

	// A later Update (a hot-loaded version) is built at once too.
	renamed := make([]*toolenv.Tool, len(tools))
	for i, tl := range tools {
		c := tl.Clone()
		if c.Name == "weather_forecast" {
			c.Name, c.ID = "forecast_v2", "demo/forecast_v2"
		}
		renamed[i] = c
	}
	s.Update(renamed)
	if err := builtGen(t, s); err != nil {
		t.Fatalf("eager build after Update: %v", err)
	}
	ids, _, err = s.Search(context.Background(), "weather forecast for the next days", 3, "")
	if err != nil || len(ids) == 0 || ids[0] != "demo/forecast_v2" || slices.Contains(ids, "demo/weather_forecast") {
		t.Fatalf("search after the second Update: %v %v, want demo/forecast_v2 and not the replaced name", ids, err)
	}
}
