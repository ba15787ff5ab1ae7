package toolenv

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Error is toolenv's application error: a Status that front-ends map to
// their wire formats and the CLI to an exit code, a message that says what
// was wrong and a hint that says how to fix it.
//
// Code below the front-ends returns *Error (possibly wrapped) for failures
// the user can act on; any other error is reported as StatusInternal.
type Error struct {
	Status   Status
	Message  string
	Hint     string
	Problems []Problem
	Err      error
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Message)
	if e.Err != nil {
		if e.Message != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// Errorw returns an *Error with the given status, hint and message.
func Errorw(status Status, hint, format string, args ...any) *Error {
	return &Error{Status: status, Hint: hint, Message: fmt.Sprintf(format, args...)}
}

// StatusOf returns the Status an error stands for: the Status of an *Error
// in its chain, StatusTimeout or StatusCanceled for context errors, and
// StatusInternal for anything else. StatusOf(nil) is StatusOK.
func StatusOf(err error) Status {
	if err == nil {
		return StatusOK
	}
	var e *Error
	if errors.As(err, &e) && e.Status != "" {
		return e.Status
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return StatusTimeout
	case errors.Is(err, context.Canceled):
		return StatusCanceled
	}
	return StatusInternal
}

// ResultOf turns an error into a failed Result from toolenv itself,
// keeping the hint and problems of an *Error in its chain.
func ResultOf(err error) *Result {
	if err == nil {
		return &Result{Status: StatusOK, Source: SourcePipeline}
	}
	r := &Result{Status: StatusOf(err), Error: err.Error(), Source: SourcePipeline}
	var e *Error
	if errors.As(err, &e) {
		r.Hint = e.Hint
		r.Problems = e.Problems
		r.Error = e.Message
		if e.Err != nil {
			if r.Error != "" {
				r.Error += ": "
			}
			r.Error += e.Err.Error()
		}
	}
	return r
}
