package sqlplan

import "fmt"

// Error is why a query could not be planned. Reason is a short, stable
// code for grouping ("parse", "unknown column", "window function", ...);
// Detail says what exactly.
type Error struct {
	Reason string
	Detail string
}

// Error implements error: "reason: detail".
func (e *Error) Error() string {
	if e.Detail == "" {
		return e.Reason
	}
	return e.Reason + ": " + e.Detail
}

func errorf(reason, format string, args ...any) *Error {
	return &Error{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}
