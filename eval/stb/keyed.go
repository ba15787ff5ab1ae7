package stb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	toolenv "github.com/toolenv/toolenv"
)

// StableToolBench's converted-answer and pass-rate files are JSON objects
// keyed by query id, whose order the tools keep.

// readKeyed reads a file holding a JSON object keyed by query id into
// entries, with the ids in file order (a repeated id keeps its first
// place and its last entry). what names the file in errors.
func readKeyed[T any](path, what string) (ids []string, entries map[string]*T, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", what, err)
	}
	entries = map[string]*T{}
	err = decodeOrderedObject(data, func(key string, d *json.Decoder) error {
		var e T
		if err := d.Decode(&e); err != nil {
			return fmt.Errorf("query %s: %w", key, err)
		}
		if _, dup := entries[key]; !dup {
			ids = append(ids, key)
		}
		entries[key] = &e
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	return ids, entries, nil
}

// writeKeyed writes entries as a JSON object keyed by ids, in their
// order, as Python's json.dump with this indent writes it (HTML not
// escaped), atomically.
func writeKeyed[T any](path, what, indent string, ids []string, entries map[string]*T) error {
	var b bytes.Buffer
	b.WriteString("{")
	for i, id := range ids {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n" + indent)
		k, _ := json.Marshal(id)
		b.Write(k)
		b.WriteString(": ")
		var e bytes.Buffer
		enc := json.NewEncoder(&e)
		enc.SetEscapeHTML(false)
		enc.SetIndent(indent, indent)
		if err := enc.Encode(entries[id]); err != nil {
			return fmt.Errorf("write %s: query %s: %w", what, id, err)
		}
		b.Write(bytes.TrimRight(e.Bytes(), "\n"))
	}
	b.WriteString("\n}\n")
	return toolenv.WriteFileAtomic(path, b.Bytes())
}

// decodeOrderedObject calls fn for each member of the JSON object in data,
// in order, with the decoder positioned at the member's value.
func decodeOrderedObject(data []byte, fn func(key string, d *json.Decoder) error) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	tok, err := d.Token()
	if err != nil {
		return err
	}
	if delim, ok := tok.(json.Delim); !ok || delim != '{' {
		return fmt.Errorf("expected a JSON object keyed by query id")
	}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if err := fn(key, d); err != nil {
			return err
		}
	}
	if _, err := d.Token(); err != nil {
		return err
	}
	if _, err := d.Token(); err != io.EOF {
		return fmt.Errorf("unexpected data after the JSON object")
	}
	return nil
}
