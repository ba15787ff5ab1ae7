package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar reports progress. It is safe for concurrent use.
type Bar struct {
	mu       sync.Mutex
	bar      *progressbar.ProgressBar
	w        io.Writer
	desc     string
	total    int
	n        int
	last     time.Time
	every    time.Duration
	finished bool
}

// New returns a bar for total steps (total < 0: unknown), writing to w
// (nil: nowhere).
func New(w io.Writer, total int, desc string) *Bar {
	if w == nil {
		w = io.Discard
	}
	b := &Bar{w: w, desc: desc, total: total, every: 2 * time.Second}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		b.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(desc),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	return b
}

// Add advances the bar by n steps.
func (b *Bar) Add(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n += n
	if b.bar != nil {
		_ = b.bar.Add(n)
		return
	}
	if now := time.Now(); now.Sub(b.last) >= b.every || (b.total > 0 && b.n >= b.total) {
		b.last = now
		b.line()
	}
}

// Describe changes the bar's description (the current item).
func (b *Bar) Describe(desc string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.desc = desc
	if b.bar != nil {
		b.bar.Describe(desc)
	}
}

func (b *Bar) line() {
	if b.total > 0 {
		fmt.Fprintf(b.w, "%s: %d/%d (%d%%)\n", b.desc, b.n, b.total, b.n*100/b.total)
	} else {
		fmt.Fprintf(b.w, "%s: %d\n", b.desc, b.n)
	}
}

// Finish ends the bar, printing the final count when not on a terminal.
func (b *Bar) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return
	}
	b.finished = true
	if b.bar != nil {
		_ = b.bar.Finish()
		return
	}
	if b.total <= 0 || b.n < b.total {
		b.line()
	}
}
