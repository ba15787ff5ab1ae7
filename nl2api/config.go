package nl2api

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/internal/configfile"
	pgs "github.com/toolenv/toolenv/internal/progress"
)

// Config is a build as "toolenv build bird" takes it, each field a flag
// (its tags; internal/configfile binds them). Options checks it and
// returns the Options Build runs with.
type Config struct {
	Data           string        `json:"data" flag:"data" path:"file" help:"BIRD folder: dev.json, dev_databases/<db>/<db>.sqlite and database_description/*.csv"`
	Out            string        `json:"out" flag:"out" path:"file" help:"output folder (OUT/slot, OUT/sel, OUT/rest, OUT/report.json, OUT/report.md)"`
	DBs            []string      `json:"db" flag:"db" help:"build only this database (repeatable; default: every database dev.json uses)"`
	Flavors        string        `json:"flavors" flag:"flavors" default:"slot,sel,rest" help:"flavors to build, comma-separated"`
	Obfuscate      bool          `json:"obfuscate" flag:"obfuscate" help:"also write <flavor>-obfuscated collections: tools FUNC_n, arguments ARG_n, names left out of descriptions, mapping in <flavor>-obfuscated.mapping.json beside the folder"`
	Seed           int64         `json:"seed" flag:"seed" default:"1" help:"seed of the obfuscation and of candidate-set shrinking"`
	Shrink         string        `json:"shrink" flag:"shrink" help:"also write rest-shrink-<p> collections offering p% of a database's REST tools per task (the gold tool always kept), e.g. 10,25,50,75"`
	Workers        int           `json:"workers" flag:"workers" default:"4" help:"tasks verified at once"`
	Writes         bool          `json:"writes" flag:"writes" help:"make the collections writable (write tools beside the read tools, run in each session's own world) and generate write tasks from each database's questions, verified on the state they leave (docs/worlds.md)"`
	WriteTasks     int           `json:"write_tasks" flag:"write-tasks" help:"most write tasks generated per database with --writes (default 24)"`
	CallTimeout    time.Duration `json:"call_timeout" flag:"call-timeout" help:"time limit of one verification call or gold query (default 10s); one that runs out of it runs again under --max-call-timeout"`
	ImageCache     string        `json:"image_cache" flag:"image-cache" help:"folder where the indexed copies of the databases are kept for every process to reuse (keyed by content, checked on every read); \"off\": index them here; $TOOLENV_IMAGE_CACHE when not given (default: toolenv/images in the user's cache folder)"`
	BuildCache     string        `json:"build_cache" flag:"build-cache" help:"folder where finished builds are kept, keyed by the program, every byte of --data and the options: an identical build writes the stored output and its report says so (\"reused build ...\"); entries checked on every read, at most 1 GiB; \"off\": always build; $TOOLENV_BUILD_CACHE when not given (default: toolenv/builds in the user's cache folder)"`
	MaxCallTimeout time.Duration `json:"max_call_timeout" flag:"max-call-timeout" help:"time limit a verification or gold query that ran out of --call-timeout runs again under (default 5m); one that runs out of it fails the build, naming its question, so that no task depends on the machine's speed"`
}

// DefaultConfig returns the configuration the CLI starts from: every
// flavor, seed 1, four workers, the image cache and the build cache in
// their default folders (rodb.DefaultCacheDir, DefaultBuildCacheDir).
func DefaultConfig() Config {
	c := configfile.Default[Config]()
	c.ImageCache = rodb.DefaultCacheDir()
	c.BuildCache = DefaultBuildCacheDir()
	return c
}

// Run checks the configuration and builds (Build): logs go to log, a
// progress bar per stage to progress (nil: none), and command is the
// command line the report's provenance records.
func (c *Config) Run(ctx context.Context, log *slog.Logger, progress io.Writer, command []string) (*Report, error) {
	opt, err := c.Options()
	if err != nil {
		return nil, err
	}
	opt.Logger, opt.Command = log, command
	if opt.ImageCache != nil {
		opt.ImageCache.Logger = log
	}
	if opt.BuildCache != nil {
		opt.BuildCache.Logger = log
	}
	if progress != nil {
		bars := pgs.NewStages(progress)
		defer bars.Finish()
		opt.Progress = func(p Progress) { bars.Update(p.Stage, p.Done, p.Total) }
	}
	return Build(ctx, opt)
}

// Options checks the configuration and returns the build's options.
// Missing folders, unknown flavors and percentages out of range are
// invalid_arguments errors naming the flag.
func (c *Config) Options() (Options, error) {
	invalid := func(format string, args ...any) (Options, error) {
		return Options{}, toolenv.Errorw(toolenv.StatusInvalidArguments, "", format, args...)
	}
	if c.Data == "" || c.Out == "" {
		return invalid("--data and --out are required (e.g. --data ../shared/data/bird --out out/bird)")
	}
	o := Options{Data: c.Data, Out: c.Out, DBs: c.DBs, Obfuscate: c.Obfuscate, Seed: c.Seed, Workers: c.Workers, CallTimeout: c.CallTimeout, MaxCallTimeout: c.MaxCallTimeout,
		Writes: c.Writes, WriteTasks: c.WriteTasks, ImageCache: rodb.CacheAt(c.ImageCache, nil),
		BuildCache: BuildCacheAt(c.BuildCache, nil)}
	for _, f := range strings.Split(c.Flavors, ",") {
		f = strings.TrimSpace(f)
		switch f {
		case Slot, Sel, Rest:
			o.Flavors = append(o.Flavors, f)
		case "":
		default:
			return invalid("--flavors: unknown flavor %q (want slot, sel, rest)", f)
		}
	}
	if c.WriteTasks < 0 {
		return invalid("--write-tasks: %d is negative", c.WriteTasks)
	}
	if c.Shrink != "" {
		for _, s := range strings.Split(c.Shrink, ",") {
			p, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(s, "%")))
			if err != nil || p <= 0 || p > 100 {
				return invalid("--shrink: %q is not a percentage between 1 and 100", s)
			}
			o.Shrink = append(o.Shrink, p)
		}
	}
	return o, nil
}
