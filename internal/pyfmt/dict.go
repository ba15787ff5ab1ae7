package pyfmt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Dict is a Python dict: its items keep the order they were added in, so
// Repr and Dumps write them in that order (a map[string]any is written
// with its keys sorted instead).
type Dict []Item

// Item is one key and value of a Dict.
type Item struct {
	Key   string
	Value any
}

// Get returns the value of key and whether d holds it.
func (d Dict) Get(key string) (any, bool) {
	for _, it := range d {
		if it.Key == key {
			return it.Value, true
		}
	}
	return nil, false
}

// Set adds key at the end, or replaces its value where it stands, as
// assigning to a Python dict does.
func (d *Dict) Set(key string, v any) {
	for i := range *d {
		if (*d)[i].Key == key {
			(*d)[i].Value = v
			return
		}
	}
	*d = append(*d, Item{Key: key, Value: v})
}

// Tuple is a Python tuple: Repr writes it in parentheses, Dumps as a
// list.
type Tuple []any

// maxDepth bounds the nesting of values read from text, so that hostile
// input cannot exhaust the stack.
const maxDepth = 256

// DecodeOrdered decodes one JSON value keeping the order of object
// members, as Python's json.loads does: objects become Dicts (a repeated
// key is kept each time it appears), arrays []any, numbers json.Number.
// Anything after the value but space is an error.
func DecodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

// DecodeOrderedPrefix decodes the JSON value at the start of s as
// DecodeOrdered does and returns the offset just after it; what follows
// is left alone.
func DecodeOrderedPrefix(s string) (v any, end int, err error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	v, err = decodeValue(dec, 0)
	if err != nil {
		return nil, 0, err
	}
	return v, int(dec.InputOffset()), nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("JSON nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		o := Dict{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			o = append(o, Item{Key: k, Value: v})
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return o, nil
	case '[':
		a := []any{}
		for dec.More() {
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return a, nil
	}
	return nil, fmt.Errorf("unexpected %v", d)
}
