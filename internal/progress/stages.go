package progress

import (
	"io"
	"sync"
)

// Stages reports the progress of work done in stages, one bar per stage:
// Update starts a new bar whenever the stage changes and advances it to
// done. It is safe for concurrent use.
type Stages struct {
	mu    sync.Mutex
	w     io.Writer
	bar   *Bar
	stage string
	done  int
}

// NewStages returns stages writing their bars to w.
func NewStages(w io.Writer) *Stages { return &Stages{w: w} }

// Update says stage has done of total steps done.
func (s *Stages) Update(stage string, done, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stage != s.stage || s.bar == nil {
		if s.bar != nil {
			s.bar.Finish()
		}
		s.stage, s.done = stage, 0
		s.bar = New(s.w, total, stage)
	}
	if done > s.done {
		s.bar.Add(done - s.done)
		s.done = done
	}
}

// Finish ends the current stage's bar.
func (s *Stages) Finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bar != nil {
		s.bar.Finish()
	}
}
