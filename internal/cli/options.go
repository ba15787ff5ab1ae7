package cli

import (
	"log/slog"

	"github.com/spf13/pflag"
	"github.com/toolenv/toolenv/internal/configfile"
)

// Options are a command's flags for a library's options struct T, one
// for every field with a flag tag (internal/configfile), and --config
// when the command also reads them from a file.
type Options[T any] struct {
	def   func() T
	flags *configfile.Flags
	path  *string
}

// Defaults returns a T holding its fields' default tags.
func Defaults[T any]() T {
	var v T
	configfile.Defaults(&v)
	return v
}

// Bind registers on fs a flag for every field of T with a flag tag, def
// giving their defaults; with file, also --config FILE.
func Bind[T any](fs *pflag.FlagSet, def func() T, file bool) *Options[T] {
	d := def()
	o := &Options[T]{def: def, flags: configfile.Bind(fs, &d, configfile.BindOptions{})}
	if file {
		o.path = fs.String("config", "", "configuration file, YAML or JSON, holding the same settings as the flags; flags given override it")
	}
	return o
}

// Value returns the options of a command without --config: the
// defaults, then the flags given.
func (o *Options[T]) Value() *T {
	v := o.def()
	o.flags.Apply(&v, nil, nil)
	return &v
}

// Resolve returns the options: the defaults, then the --config file,
// then the flags given (configfile.Layer). It logs the file's warnings.
func (o *Options[T]) Resolve(log *slog.Logger) (*T, error) {
	v := o.def()
	path := ""
	if o.path != nil {
		path = *o.path
	}
	if err := configfile.Layer(path, &v, o.flags, log); err != nil {
		return nil, err
	}
	return &v, nil
}
