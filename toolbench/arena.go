package toolbench

import (
	"encoding/json"
	"strings"
	"unsafe"

	toolenv "github.com/toolenv/toolenv"
)

// arenaChunk is the size of the blocks an arena packs strings and bytes
// into, and slabChunk the number of values of a slab block.
const (
	arenaChunk = 256 << 10
	slabChunk  = 256
)

// arena packs what the tools of a collection keep into large blocks: the
// strings and JSON texts into shared buffers, the schemas, tools and
// bindings into slices of values. Loading decodes every file into small
// short-lived objects; were the kept values allocated among them, the
// heap would stay fragmented (a third of it unused) once the garbage is
// gone, and the collector would trace hundreds of thousands of objects
// more. A block lives as long as any value in it: all of a collection's
// tools, until a new version replaces them.
//
// Strings are written once through a strings.Builder and never changed,
// so each is a substring of the block's string: no unsafe conversion of
// what the arena keeps (view only reads its input).
type arena struct {
	sb       strings.Builder
	buf      []byte
	schemas  []toolenv.Schema
	tools    []toolenv.Tool
	bindings []toolenv.Binding
	lists    []string
}

// str returns s copied into the arena.
func (a *arena) str(s string) string { return a.concat(s) }

// bytes returns the text b as a string in the arena.
func (a *arena) bytes(b []byte) string { return a.concat(view(b)) }

// concat returns the strings joined, copied into the arena as one.
func (a *arena) concat(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	switch {
	case n == 0:
		return ""
	case n > arenaChunk/8: // a large one alone
		var sb strings.Builder
		sb.Grow(n)
		for _, p := range parts {
			sb.WriteString(p)
		}
		return sb.String()
	case a.sb.Cap()-a.sb.Len() < n:
		a.sb = strings.Builder{}
		a.sb.Grow(arenaChunk)
	}
	off := a.sb.Len()
	for _, p := range parts {
		a.sb.WriteString(p)
	}
	return a.sb.String()[off:]
}

// raw returns raw copied into the arena; appending to the copy never
// writes over a neighbour (its capacity is its length).
func (a *arena) raw(raw []byte) json.RawMessage { return a.rawString(view(raw)) }

// rawString is raw for a text given as a string.
func (a *arena) rawString(s string) json.RawMessage {
	switch {
	case len(s) == 0:
		return nil
	case len(s) > arenaChunk/8:
		return json.RawMessage(s)
	case cap(a.buf)-len(a.buf) < len(s):
		a.buf = make([]byte, 0, arenaChunk)
	}
	off := len(a.buf)
	a.buf = append(a.buf, s...)
	return json.RawMessage(a.buf[off:len(a.buf):len(a.buf)])
}

// view is b as a string without a copy: good while b is unchanged (the
// arena copies from it; the tool-file scanner's strings point into the
// file read, see decodeToolFile).
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// list returns a list of n strings, empty, to fill with append; its
// capacity is n, so an append beyond n moves it out of the arena.
func (a *arena) list(n int) []string {
	if n > slabChunk/4 {
		return make([]string, 0, n)
	}
	if cap(a.lists)-len(a.lists) < n {
		a.lists = make([]string, 0, slabChunk)
	}
	off := len(a.lists)
	a.lists = a.lists[:off+n]
	return a.lists[off : off : off+n]
}

func (a *arena) schema() *toolenv.Schema {
	if len(a.schemas) == cap(a.schemas) {
		a.schemas = make([]toolenv.Schema, 0, slabChunk)
	}
	a.schemas = a.schemas[:len(a.schemas)+1]
	return &a.schemas[len(a.schemas)-1]
}

func (a *arena) tool() *toolenv.Tool {
	if len(a.tools) == cap(a.tools) {
		a.tools = make([]toolenv.Tool, 0, slabChunk)
	}
	a.tools = a.tools[:len(a.tools)+1]
	return &a.tools[len(a.tools)-1]
}

func (a *arena) binding() *toolenv.Binding {
	if len(a.bindings) == cap(a.bindings) {
		a.bindings = make([]toolenv.Binding, 0, slabChunk)
	}
	a.bindings = a.bindings[:len(a.bindings)+1]
	return &a.bindings[len(a.bindings)-1]
}
