package toolenv

import (
	"fmt"
	"strconv"
	"testing"
)

func TestBounded(t *testing.T) {
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "w" + strconv.Itoa(i)
		}
		return out
	}
	for _, n := range []int{0, 1, MaxNotes, MaxNotes + 1, 60000} {
		r := &Result{Status: StatusInvalidArguments, Warnings: many(n), Faults: many(n / 2)}
		for i := range n {
			r.Problems = append(r.Problems, Problem{Param: strconv.Itoa(i), Code: "unknown_param", Message: "m"})
		}
		b := r.Bounded(0)
		if n <= MaxNotes && b != r {
			t.Fatalf("n=%d: a result within bounds was copied", n)
		}
		if len(b.Warnings) > MaxNotes || len(b.Faults) > MaxNotes || len(b.Problems) > MaxNotes {
			t.Fatalf("n=%d: %d warnings, %d faults, %d problems", n, len(b.Warnings), len(b.Faults), len(b.Problems))
		}
		if n > MaxNotes {
			if len(r.Warnings) != n || len(r.Problems) != n {
				t.Fatal("Bounded changed its receiver")
			}
			more := strconv.Itoa(n - MaxNotes + 1)
			if b.Warnings[MaxNotes-1] != "and "+more+" more warnings, not listed" || b.Problems[MaxNotes-1].Message != "and "+more+" more problems, not listed (fix these first)" ||
				b.Problems[MaxNotes-1].Code != "unknown_param" || b.Warnings[0] != "w0" {
				t.Fatalf("n=%d: %q %+v", n, b.Warnings[MaxNotes-1], b.Problems[MaxNotes-1])
			}
		}
	}
	if (*Result)(nil).Bounded(0) != nil {
		t.Fatal("nil")
	}
}

func ExampleResult_Bounded() {
	r := &Result{Status: StatusOK}
	for i := range 12 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("note %d", i))
	}
	for _, w := range r.Bounded(4).Warnings {
		fmt.Println(w)
	}
	// Output:
	// note 0
	// note 1
	// note 2
	// and 9 more warnings, not listed
}
