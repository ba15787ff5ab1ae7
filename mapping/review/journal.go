package review

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping"
)

// The verdicts of an annotation.
const (
	Accept  = "accept"
	Reject  = "reject"
	Correct = "correct"
)

// Annotation is one person's verdict on one proposal (or a mapping they
// added).
type Annotation struct {
	// ID is unique; Time orders annotations.
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
	// Query is the query the proposal was made for; Proposal its ID (""
	// for a mapping the annotator added).
	Query    string `json:"query"`
	Proposal string `json:"proposal,omitempty"`
	// Annotator names the person.
	Annotator string `json:"annotator"`
	Verdict   string `json:"verdict"`
	// Mapping is the mapping as the annotator judged it: the proposal's
	// for accept and reject, the corrected one for correct.
	Mapping *mapping.Mapping `json:"mapping"`
	Note    string           `json:"note,omitempty"`
}

// journal is the append-only file of annotations.
type journal struct {
	mu   sync.Mutex
	path string
	f    *os.File
	all  []*Annotation
	seq  int
}

// openJournal reads the annotations in path (creating the file) and opens
// it for appending. Lines that do not parse (a torn last write) are
// skipped and reported; nothing else is lost.
func openJournal(path string) (*journal, []error, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("open review journal: %w", err)
	}
	all, problems, err := toolenv.ReadJSONLines(f, path, "an annotation", 16<<20, func(a *Annotation) error {
		if a.Mapping == nil {
			return errors.New("not an annotation: it has no mapping")
		}
		return nil
	})
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("read review journal %s: %w", path, err)
	}
	j := &journal{path: path, f: f, all: all}
	// A torn last line must not glue onto the next record.
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			if _, err := f.Write([]byte("\n")); err != nil {
				f.Close()
				return nil, nil, fmt.Errorf("repair review journal %s: %w", path, err)
			}
		}
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, nil, err
	}
	j.seq = len(j.all)
	return j, problems, nil
}

// append writes a to the journal and syncs it before returning: once
// append returns, the annotation survives a crash.
func (j *journal) append(a *Annotation) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return errors.New("the review journal is closed")
	}
	j.seq++
	if a.ID == "" {
		a.ID = fmt.Sprintf("a%d-%d", time.Now().UnixNano(), j.seq)
	}
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("encode annotation: %w", err)
	}
	b = append(b, '\n')
	if _, err := j.f.Write(b); err != nil {
		return fmt.Errorf("write review journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("sync review journal %s: %w", j.path, err)
	}
	j.all = append(j.all, a)
	return nil
}

// annotations returns a copy of every annotation, in journal order.
func (j *journal) annotations() []*Annotation {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]*Annotation(nil), j.all...)
}

func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}
