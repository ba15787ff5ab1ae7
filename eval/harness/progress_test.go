package harness

import (
	"strings"
	"testing"
)

// TestProgressLine: the progress line names what it counts, gold answers
// reached of the episodes scored, and does not read as episodes finished.
func TestProgressLine(t *testing.T) {
	got := progressLine("react", 0, 17)
	if got != "eval react (gold answer reached in 0 of 17 scored)" || strings.Contains(got, "completed") {
		t.Errorf("%q", got)
	}
}
