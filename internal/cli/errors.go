package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/configfile"
)

// UsageError marks a mistake in how a command was invoked: exit code 2.
type UsageError struct{ error }

// Unwrap returns the mistake.
func (u UsageError) Unwrap() error { return u.error }

// Usage marks err as a usage error (nil stays nil).
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return UsageError{err}
}

// Usagef returns a usage error with the formatted message.
func Usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// Exit codes of toolenv's commands (ExitCode).
const (
	ExitOK        = 0
	ExitFailure   = 1   // anything else
	ExitUsage     = 2   // a usage error, invalid arguments or input
	ExitNotFound  = 3   // something named is missing
	ExitUpstream  = 4   // an upstream, a backend or a model failed
	ExitInterrupt = 130 // the command was interrupted
)

// ExitCode maps an error to the process exit code: ExitUsage for usage
// errors (cobra's unknown commands and argument counts included) and
// invalid input, ExitNotFound for missing things, ExitUpstream for
// upstream or backend failures, ExitInterrupt for an interrupt,
// ExitFailure for anything else; ExitOK for nil.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var u UsageError
	if errors.As(err, &u) || strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "accepts ") {
		return ExitUsage
	}
	switch toolenv.StatusOf(err) {
	case toolenv.StatusInvalidArguments, toolenv.StatusBadRequest, toolenv.StatusTooLarge:
		return ExitUsage
	case toolenv.StatusNotFound, toolenv.StatusUnknownTool:
		return ExitNotFound
	case toolenv.StatusUpstreamError, toolenv.StatusUnavailable, toolenv.StatusTimeout, toolenv.StatusRateLimited:
		return ExitUpstream
	case toolenv.StatusCanceled:
		return ExitInterrupt
	}
	return ExitFailure
}

// OneOf checks a flag's value against the values it takes, for flags not
// bound from a struct's tags: the usage error lists them and names the
// nearest.
func OneOf(flag, value string, valid ...string) error {
	if slices.Contains(valid, value) {
		return nil
	}
	msg := fmt.Sprintf("--%s %q: want %s", flag, value, strings.Join(valid, ", "))
	if near := configfile.Nearest(value, valid); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	return UsageError{errors.New(msg)}
}
