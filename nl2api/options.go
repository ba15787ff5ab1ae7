package nl2api

import (
	"log/slog"
	"time"

	"github.com/toolenv/toolenv/backend/sqltools/rodb"
)

// The flavors.
const (
	Slot = "slot"
	Sel  = "sel"
	Rest = "rest"
)

// Flavors lists the flavors in build order.
var Flavors = []string{Slot, Sel, Rest}

// Options configure a build.
type Options struct {
	// Data is the BIRD folder (dev.json, dev_databases/, ...).
	Data string
	// Out is the output folder.
	Out string
	// DBs restricts the build to these databases (default: all that
	// dev.json uses).
	DBs []string
	// Flavors restricts the build (default: slot, sel, rest).
	Flavors []string
	// Obfuscate also writes <flavor>-obfuscated collections whose tools
	// are named FUNC_n and arguments ARG_n (descriptions kept), with the
	// mapping in <flavor>-obfuscated.mapping.json beside the folder.
	Obfuscate bool
	// Seed seeds the obfuscation and the shrinking (default 1).
	Seed int64
	// Shrink lists percentages of a database's REST tools to offer per
	// task (e.g. 10, 25, 50, 75); each writes a rest-shrink-<p> collection.
	// The gold tool is always offered.
	Shrink []int
	// Workers verifies this many tasks at once (default 4).
	Workers int
	// Progress, when set, is told about each step.
	Progress func(Progress)
	// Logger logs warnings (unreadable descriptions, databases that
	// failed); nil discards.
	Logger *slog.Logger
	// CallTimeout bounds each verification call and gold query (default
	// DefaultCallTimeout); one that runs out of time runs again under
	// MaxCallTimeout (default DefaultMaxCallTimeout, and never below
	// CallTimeout), and one that runs out of that too fails the build,
	// naming its question: no task is dropped, or kept, for the speed of
	// the machine that builds.
	CallTimeout    time.Duration
	MaxCallTimeout time.Duration
	// Writes also makes every collection writable — write tools next to
	// the read tools (SLOT insert/update/delete_rows, SEL one per table,
	// REST create/update/delete by key), run in each session's own world
	// — and generates write tasks from each database's questions, each
	// kept only when its gold calls reproduce its gold end state.
	Writes bool
	// WriteTasks is the most write tasks made per database (default
	// DefaultWriteTasks), before verification drops any.
	WriteTasks int
	// ImageCache, when set, keeps the indexed copies of the databases on
	// disk for every process to reuse (rodb.DiskCache); nil: the build
	// indexes its own.
	ImageCache *rodb.DiskCache
	// BuildCache, when set, reuses the output of an identical earlier
	// build and stores this one's (BuildCache); nil: every build is made.
	BuildCache *BuildCache
	// Command is the command line that asked for the build, recorded in
	// the report's provenance (may be nil).
	Command []string

	limits *timeLimits
	// outputs records the files the build writes (for BuildCache).
	outputs *outputs
}

// Progress reports build progress: Done of Total items of a stage.
type Progress struct {
	Stage string
	Done  int
	Total int
}

func (o *Options) defaults() {
	if len(o.Flavors) == 0 {
		o.Flavors = Flavors
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.MaxCallTimeout == 0 {
		o.MaxCallTimeout = max(DefaultMaxCallTimeout, o.CallTimeout)
	}
	o.limits = newTimeLimits(o.CallTimeout, o.MaxCallTimeout)
}

func (o *Options) progress(stage string, done, total int) {
	if o.Progress != nil {
		o.Progress(Progress{Stage: stage, Done: done, Total: total})
	}
}

func (o *Options) wants(flavor string) bool {
	for _, f := range o.Flavors {
		if f == flavor {
			return true
		}
	}
	return false
}
