package pyfmt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// OrderedDecoder decodes JSON keeping the order of object members:
// objects become Dicts, arrays []any, numbers json.Number. The zero value
// is what DecodeOrdered uses.
type OrderedDecoder struct {
	// MaxDepth bounds nesting: a value more than MaxDepth levels down
	// is an error, so that hostile input cannot exhaust the stack. 0
	// means 256.
	MaxDepth int
	// Unique keeps a repeated key once, where it first stood, with the
	// value it was last given (the dict Python's json.loads builds);
	// otherwise it is kept each time it appears (json.loads with
	// object_pairs_hook).
	Unique bool
}

// Decode decodes one JSON value. Anything after the value but space is
// an error.
func (o OrderedDecoder) Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := o.value(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

// DecodePrefix decodes the JSON value at the start of s and returns the
// offset just after it; what follows is left alone.
func (o OrderedDecoder) DecodePrefix(s string) (v any, end int, err error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	v, err = o.value(dec, 0)
	if err != nil {
		return nil, 0, err
	}
	return v, int(dec.InputOffset()), nil
}

// DecodeOrdered decodes one JSON value keeping the order of object
// members, as Python's json.loads does: objects become Dicts (a repeated
// key is kept each time it appears), arrays []any, numbers json.Number.
// Anything after the value but space is an error.
func DecodeOrdered(data []byte) (any, error) { return OrderedDecoder{}.Decode(data) }

// DecodeOrderedPrefix decodes the JSON value at the start of s as
// DecodeOrdered does and returns the offset just after it; what follows
// is left alone.
func DecodeOrderedPrefix(s string) (v any, end int, err error) {
	return OrderedDecoder{}.DecodePrefix(s)
}

func (o OrderedDecoder) value(dec *json.Decoder, depth int) (any, error) {
	limit := o.MaxDepth
	if limit <= 0 {
		limit = maxDepth
	}
	if depth > limit {
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
		obj := Dict{}
		var at map[string]int // with Unique: where each key stands
		if o.Unique {
			at = map[string]int{}
		}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := o.value(dec, depth+1)
			if err != nil {
				return nil, err
			}
			if i, seen := at[k]; seen {
				obj[i].Value = v
				continue
			}
			if at != nil {
				at[k] = len(obj)
			}
			obj = append(obj, Item{Key: k, Value: v})
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return obj, nil
	case '[':
		a := []any{}
		for dec.More() {
			v, err := o.value(dec, depth+1)
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
