package toolenv

import "strconv"

// MaxNotes is the most warnings, faults and problems (each) a front-end
// writes for one result: a client parses a bounded answer whatever the
// call (Python's http.client, and so StableToolBench's client, refuses
// more than 100 headers). Result.Bounded cuts the lists to it.
const MaxNotes = 10

// Bounded returns r with at most max warnings, faults and problems
// (each): r itself when it holds no more, else a copy whose lists keep
// their first max-1 entries and end with one saying how many more there
// were. max < 2 means MaxNotes.
func (r *Result) Bounded(max int) *Result {
	if r == nil {
		return nil
	}
	if max < 2 {
		max = MaxNotes
	}
	if len(r.Warnings) <= max && len(r.Faults) <= max && len(r.Problems) <= max {
		return r
	}
	cp := *r
	cp.Warnings = boundNotes(r.Warnings, max, "warnings")
	cp.Faults = boundNotes(r.Faults, max, "faults")
	if n := len(r.Problems); n > max {
		more := n - (max - 1)
		cp.Problems = append(append(make([]Problem, 0, max), r.Problems[:max-1]...), Problem{
			Code:    r.Problems[max-1].Code,
			Message: "and " + strconv.Itoa(more) + " more problems, not listed (fix these first)",
		})
	}
	return &cp
}

func boundNotes(list []string, max int, what string) []string {
	if len(list) <= max {
		return list
	}
	more := len(list) - (max - 1)
	return append(append(make([]string, 0, max), list[:max-1]...), "and "+strconv.Itoa(more)+" more "+what+", not listed")
}
