package toolbench

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// decodeToolFile reads a ToolBench tool file of the common shape into tf
// without a general decoder: an object whose keys are written as the
// fields' tags (other keys are skipped, their values checked), strings,
// lists of API and parameter objects, defaults that are strings, numbers,
// booleans or null, and any JSON value as template. ok is false for
// anything else (a key in another case or with escapes, a key given
// twice, a value of another type, a nested default, invalid JSON or
// UTF-8, nesting beyond fastDecodeMaxDepth), and tf is then to be
// decoded again by decodeDocBy, which reads such files as encoding/json
// does. Where ok, tf is what encoding/json decodes (FuzzDecodeToolFile).
//
// Strings without escapes and the template point into data, as
// decodeDocBy's zero-copy mode does: good only while data is.
func decodeToolFile(data []byte, tf *ToolFile) (ok bool) {
	s := scanner{data: data}
	*tf = ToolFile{}
	if !s.open('{') {
		return false
	}
	seen := 0
	for first := true; ; first = false {
		key, end, ok := s.key(first, false)
		if !ok {
			return false
		}
		if end {
			break
		}
		var bit int
		var dst *string
		switch key {
		case "tool_name":
			bit, dst = 1, &tf.ToolName
		case "standardized_name":
			bit, dst = 2, &tf.StandardizedName
		case "title":
			bit, dst = 4, &tf.Title
		case "tool_description":
			bit, dst = 8, &tf.ToolDescription
		case "host":
			bit, dst = 16, &tf.Host
		case "api_list":
			bit = 32
		default:
			if !s.unknown(key, toolFileKeys) {
				return false
			}
			continue
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		if dst != nil {
			if !s.str(dst) {
				return false
			}
			continue
		}
		if !readList(&s, &tf.APIList, (*scanner).api) {
			return false
		}
	}
	s.space()
	return s.i == len(s.data)
}

// The keys each object knows, for unknown's check that a key is not one
// of them in another case (encoding/json would match it).
var (
	toolFileKeys = []string{"tool_name", "standardized_name", "title", "tool_description", "host", "api_list"}
	apiKeys      = []string{"name", "url", "description", "method", "required_parameters", "optional_parameters", "template_response"}
	paramKeys    = []string{"name", "type", "description", "default"}
)

// scanner reads JSON text from data at i.
type scanner struct {
	data  []byte
	i     int
	depth int
}

func (s *scanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after space, 0 at the end.
func (s *scanner) peek() byte {
	s.space()
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

// lit consumes the literal word w.
func (s *scanner) lit(w string) bool {
	if len(s.data)-s.i < len(w) || string(s.data[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}

// open consumes the bracket c ('{' or '[') that opens an object or a
// list, one level deeper (false beyond fastDecodeMaxDepth).
func (s *scanner) open(c byte) bool {
	if s.peek() != c || s.depth >= fastDecodeMaxDepth {
		return false
	}
	s.i++
	s.depth++
	return true
}

// key reads the next key of an open object and stands on its value;
// end is true, and the object closed, when it has no more. Keys must be
// plain (rawKey), unless anyKey: then any string will do.
func (s *scanner) key(first, anyKey bool) (key string, end, ok bool) {
	c := s.peek()
	switch {
	case c == '}' && first:
		s.i++
		s.depth--
		return "", true, true
	case first:
	case c == ',':
		s.i++
	case c == '}':
		s.i++
		s.depth--
		return "", true, true
	default:
		return "", false, false
	}
	if s.peek() != '"' {
		return "", false, false
	}
	if anyKey {
		ok = s.skipString() // a key of an object skipped
	} else {
		key, ok = s.rawKey()
	}
	if !ok || s.peek() != ':' {
		return "", false, false
	}
	s.i++
	return key, false, true
}

// openList opens a list, or reads null (isNull).
func (s *scanner) openList() (isNull, ok bool) {
	if s.peek() == 'n' {
		return true, s.lit("null")
	}
	return false, s.open('[')
}

// elem moves to the next element of an open list; end is true, and the
// list closed, when it has no more.
func (s *scanner) elem(first bool) (end, ok bool) {
	c := s.peek()
	switch {
	case c == ']':
		s.i++
		s.depth--
		return true, true
	case first:
		return false, true
	case c == ',':
		s.i++
		return false, true
	}
	return false, false
}

// rawKey reads a key without escapes (ok is false for one with any, or
// with bytes outside printable ASCII: both are left to the decoders).
func (s *scanner) rawKey() (string, bool) {
	start := s.i + 1
	for j := start; j < len(s.data); j++ {
		switch c := s.data[j]; {
		case c == '"':
			s.i = j + 1
			return view(s.data[start:j]), true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return "", false
		}
	}
	return "", false
}

// unknown skips the value of a key the object does not hold, unless the
// key is one of known in another case.
func (s *scanner) unknown(key string, known []string) bool {
	for _, k := range known {
		if strings.EqualFold(key, k) {
			return false
		}
	}
	_, ok := s.value()
	return ok
}

// str reads a string (not null) into *dst.
func (s *scanner) str(dst *string) bool {
	v, ok := s.string()
	*dst = v
	return ok
}

// string reads a string (not null).
func (s *scanner) string() (string, bool) {
	if s.peek() != '"' {
		return "", false
	}
	start := s.i
	simple := true
	j := s.i + 1
	for ; j < len(s.data); j++ {
		c := s.data[j]
		if c == '"' {
			break
		}
		if c == '\\' {
			simple = false
			j++
			continue
		}
		if c < 0x20 {
			return "", false
		}
	}
	if j >= len(s.data) {
		return "", false
	}
	s.i = j + 1
	raw := s.data[start+1 : j]
	if !utf8.Valid(raw) {
		return "", false // encoding/json replaces the bad bytes: left to it
	}
	if simple {
		return view(raw), true
	}
	var v string
	err := json.Unmarshal(s.data[start:s.i], &v)
	return v, err == nil
}

// skipString skips a string, checking it, without decoding it.
func (s *scanner) skipString() bool {
	if s.peek() != '"' {
		return false
	}
	start := s.i + 1
	j := start
	for ; j < len(s.data); j++ {
		c := s.data[j]
		if c == '"' {
			break
		}
		if c < 0x20 {
			return false
		}
		if c == '\\' {
			j++
			if j >= len(s.data) {
				return false
			}
			switch s.data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if hex4(s.data, j+1) < 0 {
					return false
				}
				j += 4
			default:
				return false
			}
		}
	}
	if j >= len(s.data) || !utf8.Valid(s.data[start:j]) {
		return false
	}
	s.i = j + 1
	return true
}

// api reads one object of api_list.
func (s *scanner) api(a *ToolFileAPI) bool {
	if !s.open('{') {
		return false
	}
	seen := 0
	for first := true; ; first = false {
		key, end, ok := s.key(first, false)
		if !ok {
			return false
		}
		if end {
			return true
		}
		var bit int
		var dst *string
		var params *[]ParamDoc
		switch key {
		case "name":
			bit, dst = 1, &a.Name
		case "url":
			bit, dst = 2, &a.URL
		case "description":
			bit, dst = 4, &a.Description
		case "method":
			bit, dst = 8, &a.Method
		case "required_parameters":
			bit, params = 16, &a.RequiredParameters
		case "optional_parameters":
			bit, params = 32, &a.OptionalParameters
		case "template_response":
			bit = 64
		default:
			if !s.unknown(key, apiKeys) {
				return false
			}
			continue
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		switch {
		case dst != nil:
			ok = s.str(dst)
		case params != nil:
			ok = readList(s, params, (*scanner).param)
		case s.peek() == 'n':
			ok = false // a null template: left to the decoders
		default:
			a.TemplateResponse, ok = s.value()
		}
		if !ok {
			return false
		}
	}
}

// readList reads a list into *list (null leaves it nil, [] makes it
// empty, as encoding/json does), each element by elem.
func readList[T any](s *scanner, list *[]T, elem func(*scanner, *T) bool) bool {
	isNull, ok := s.openList()
	if !ok || isNull {
		return ok
	}
	*list = []T{}
	for first := true; ; first = false {
		end, ok := s.elem(first)
		if !ok {
			return false
		}
		if end {
			return true
		}
		var zero T
		*list = append(*list, zero)
		if !elem(s, &(*list)[len(*list)-1]) {
			return false
		}
	}
}

// param reads one parameter object.
func (s *scanner) param(p *ParamDoc) bool {
	if !s.open('{') {
		return false
	}
	seen := 0
	for first := true; ; first = false {
		key, end, ok := s.key(first, false)
		if !ok {
			return false
		}
		if end {
			return true
		}
		var bit int
		var dst *string
		switch key {
		case "name":
			bit, dst = 1, &p.Name
		case "type":
			bit, dst = 2, &p.Type
		case "description":
			bit, dst = 4, &p.Description
		case "default":
			bit = 8
		default:
			if !s.unknown(key, paramKeys) {
				return false
			}
			continue
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		if dst != nil {
			ok = s.str(dst)
		} else {
			ok = s.defaultValue(p)
		}
		if !ok {
			return false
		}
	}
}

// defaultValue reads a parameter's default: a string, number, boolean or
// null (an object or a list is left to the decoders).
func (s *scanner) defaultValue(p *ParamDoc) bool {
	switch c := s.peek(); {
	case c == '"':
		v, ok := s.string()
		p.Default = v
		return ok
	case c == 't' || c == 'f' || c == 'n':
		raw, ok := s.value()
		switch string(raw) {
		case "true":
			p.Default = true
		case "false":
			p.Default = false
		}
		return ok
	case c == '-' || c >= '0' && c <= '9':
		raw, ok := s.value()
		p.Default = json.Number(view(raw))
		return ok
	}
	return false
}

// value skips one JSON value, checking it, and returns its text.
func (s *scanner) value() (json.RawMessage, bool) {
	s.space()
	start := s.i
	if s.i >= len(s.data) {
		return nil, false
	}
	ok := false
	switch c := s.data[s.i]; {
	case c == '{':
		ok = s.skipObject()
	case c == '[':
		ok = s.skipList()
	case c == '"':
		ok = s.skipString()
	case c == 't':
		ok = s.lit("true")
	case c == 'f':
		ok = s.lit("false")
	case c == 'n':
		ok = s.lit("null")
	case c == '-' || c >= '0' && c <= '9':
		ok = s.number()
	}
	return json.RawMessage(s.data[start:s.i:s.i]), ok
}

// skipObject skips an object, checking it.
func (s *scanner) skipObject() bool {
	if !s.open('{') {
		return false
	}
	for first := true; ; first = false {
		_, end, ok := s.key(first, true)
		if !ok {
			return false
		}
		if end {
			return true
		}
		if _, ok := s.value(); !ok {
			return false
		}
	}
}

// skipList skips a list, checking it.
func (s *scanner) skipList() bool {
	if !s.open('[') {
		return false
	}
	for first := true; ; first = false {
		end, ok := s.elem(first)
		if !ok {
			return false
		}
		if end {
			return true
		}
		if _, ok := s.value(); !ok {
			return false
		}
	}
}

// number consumes a number as JSON writes them.
func (s *scanner) number() bool {
	d := s.data
	i := s.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(d) && d[i] == '.' {
		i++
		n := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == n {
			return false
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		n := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == n {
			return false
		}
	}
	s.i = i
	return true
}
