package configfile

import (
	"errors"
	"log/slog"

	"github.com/toolenv/toolenv"
)

// Layer sets the configuration v points to (holding the defaults) from
// the configuration file at path ("" for none), then from the flags the
// user gave (nil for none; bound to v's type): defaults < file < flags.
// It logs the file's warnings, and at debug level every flag that
// overrides a different value in the file. A file that does not exist is
// a not-found error; a file or value that is wrong, an invalid-arguments
// error saying what to write instead. Every command's options, whatever
// their type, are resolved this way.
func Layer(path string, v any, flags *Flags, log *slog.Logger) error {
	var file *File
	if path != "" {
		f, err := Load(path, v)
		if errors.Is(err, ErrNotExist) {
			return &toolenv.Error{Status: toolenv.StatusNotFound, Err: err}
		} else if err != nil {
			return &toolenv.Error{Status: toolenv.StatusInvalidArguments, Err: err}
		}
		for _, w := range f.Warnings {
			log.Warn(w)
		}
		file = f
	}
	if flags != nil {
		flags.Apply(v, file, log)
	}
	return nil
}
