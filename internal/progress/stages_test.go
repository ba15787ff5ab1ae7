package progress

import (
	"strings"
	"testing"
)

func TestStages(t *testing.T) {
	var b strings.Builder
	s := NewStages(&b)
	s.Update("load", 1, 2)
	s.Update("load", 2, 2)
	s.Update("verify", 3, 3)
	s.Finish()
	out := b.String()
	if !strings.Contains(out, "load: 2/2") || !strings.Contains(out, "verify: 3/3") || strings.Index(out, "load") > strings.Index(out, "verify") {
		t.Errorf("%q", out)
	}
}
