package toolenv

import (
	"errors"
	"unsafe"
)

// UnquoteJSON decodes lit, one JSON string (its quotes included, spaces
// around it allowed), exactly as ParseJSON decodes a string value, into
// a new byte slice nothing else refers to, or returns the error ParseJSON
// gives for lit. It is for JSON text sent inside a JSON string
// (StableToolBench's tool_input): unescaped once, at the cost of one
// allocation no longer than lit, and then parsed in place by
// ParseArgsOwned, where ParseJSON would build a string that a parser
// needs copied again.
func UnquoteJSON(lit []byte) ([]byte, error) {
	p := jsonParser{data: lit}
	p.space()
	if p.i >= len(lit) || lit[p.i] != '"' {
		if _, err := ParseJSON(lit); err != nil {
			return nil, err
		}
		return nil, errors.New("want a JSON string")
	}
	p.i++
	// What a string decodes to is never longer than its escaped form: a
	// byte stands for itself, an escape of two bytes for one, \uXXXX (six)
	// for at most three and a surrogate pair (twelve) for four.
	buf, err := p.strRest(make([]byte, 0, len(lit)-p.i))
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(lit) {
		return nil, p.fail("unexpected data after the JSON value")
	}
	return buf, nil
}

// ParseArgsOwned is ParseArgs for data the caller hands over: data must
// not change afterwards, however long the arguments live, since their
// strings and numbers may be cut from it where ParseArgs would cut them
// from a copy of data (see argsArena). A front-end that decoded the
// arguments' text into a buffer of its own (UnquoteJSON) saves that
// copy.
func ParseArgsOwned(data []byte, s *Schema) (map[string]any, error) {
	p := argsParser(data, s, true)
	return p.documentObject()
}

// ownedArena is argsArena for data the caller hands over: data itself.
func ownedArena(data []byte) string {
	if len(data) < argsArenaMin {
		return ""
	}
	return unsafe.String(unsafe.SliceData(data), len(data))
}
