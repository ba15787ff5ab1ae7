package rodb

import (
	"context"
	"os"
	"sync"
	"time"
)

// Images keeps the indexed in-memory images Open makes of database files,
// so that a program opening the same database several times (one
// environment per setting of a measurement, each with its backends)
// copies and indexes it once. An image is kept for a file's absolute path
// while its size and modification time stay the same; a file that
// changed is indexed again. The zero value is ready to use, and an Images
// is safe for concurrent use; give the same one to every Open (through
// Options.Images) that may share. Images holds the images until it is
// dropped.
type Images struct {
	mu      sync.Mutex
	entries map[string]*imageEntry
}

type imageEntry struct {
	size    int64
	modTime time.Time
	once    sync.Once
	img     []byte
	err     error
}

// get returns the image of the file at abs (of info st), made by build
// once per version of the file; an error is not kept (the next open
// tries again).
func (m *Images) get(ctx context.Context, abs string, st os.FileInfo, build func(context.Context) ([]byte, error)) ([]byte, error) {
	m.mu.Lock()
	if m.entries == nil {
		m.entries = map[string]*imageEntry{}
	}
	e := m.entries[abs]
	if e == nil || e.size != st.Size() || !e.modTime.Equal(st.ModTime()) {
		e = &imageEntry{size: st.Size(), modTime: st.ModTime()}
		m.entries[abs] = e
	}
	m.mu.Unlock()
	e.once.Do(func() { e.img, e.err = build(ctx) })
	if e.err != nil {
		m.mu.Lock()
		if m.entries[abs] == e {
			delete(m.entries, abs)
		}
		m.mu.Unlock()
		return nil, e.err
	}
	return e.img, nil
}
