package pyfmt

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
