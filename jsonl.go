package toolenv

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// ReadJSONLines decodes each non-empty line of r (lines may be up to
// maxLine bytes) into a new T. A line that does not decode, or that check
// rejects (check may be nil), is skipped and reported in problems as
// "name:line: skipped, ...", what naming the value it should hold ("a
// task"), so that one broken line never loses the others. err is an error
// reading r; the values read before it are returned with it.
func ReadJSONLines[T any](r io.Reader, name, what string, maxLine int, check func(*T) error) (vals []*T, problems []error, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(1<<20, maxLine)), maxLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		v := new(T)
		if err := DecodeJSON(b, v); err != nil {
			problems = append(problems, fmt.Errorf("%s:%d: skipped, not %s: %w", name, line, what, err))
			continue
		}
		if check != nil {
			if err := check(v); err != nil {
				problems = append(problems, fmt.Errorf("%s:%d: skipped, %w", name, line, err))
				continue
			}
		}
		vals = append(vals, v)
	}
	return vals, problems, sc.Err()
}
