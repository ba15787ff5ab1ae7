package simulate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/pyfmt"
	"github.com/toolenv/toolenv/toolbench"
)

// Neighbours gives, for a tool, the other APIs a simulated response could
// belong to by mistake. The validator compares a response with their
// documented shapes and names.
type Neighbours interface {
	Neighbours(t *toolenv.Tool) []*toolenv.Tool
}

// SameGroup returns Neighbours over tools: the other APIs of the same
// collection and group (for ToolBench, of the same tool — the APIs a
// simulator confuses most).
func SameGroup(tools []*toolenv.Tool) Neighbours {
	g := sameGroup{}
	for _, t := range tools {
		k := t.Collection + "\x00" + t.Group
		g[k] = append(g[k], t)
	}
	return g
}

type sameGroup map[string][]*toolenv.Tool

func (g sameGroup) Neighbours(t *toolenv.Tool) []*toolenv.Tool {
	all := g[t.Collection+"\x00"+t.Group]
	out := make([]*toolenv.Tool, 0, len(all))
	for _, n := range all {
		if n.ID != t.ID {
			out = append(out, n)
		}
	}
	return out
}

// problem is one reason a simulated response may not be cached.
type problem struct {
	check   string
	message string
}

// checkInput is what the checks look at.
type checkInput struct {
	doc        *toolenv.Tool
	shape      *shape // the documented shape; nil when undocumented
	body       json.RawMessage
	value      any // structured(body)
	neighbours []*toolenv.Tool
	shapes     *shapeCache
}

// check is one named validation rule: it returns a problem message, or ""
// when the response passes.
type check struct {
	name string
	run  func(in *checkInput) string
}

// checks are the validation rules a successful simulated response must
// pass before it may be cached, in order.
var checks = []check{
	{"empty", checkEmpty},
	{"prompt_example", checkPromptExample},
	{"shape", checkShape},
	{"other_api", checkOtherAPI},
}

// validate runs every check and returns the problems found.
func validate(in *checkInput) []problem {
	var out []problem
	for _, c := range checks {
		if msg := c.run(in); msg != "" {
			out = append(out, problem{c.name, msg})
		}
	}
	return out
}

// checkEmpty: an empty response ("", null, {}, blank text) is no answer;
// an empty list is one only when the documentation shows a list.
func checkEmpty(in *checkInput) string {
	switch v := in.value.(type) {
	case nil:
		return "the simulated response is empty (null)"
	case string:
		switch strings.TrimSpace(v) {
		case "", "None", "null", "{}", "[]", `""`:
			return "the simulated response is empty"
		}
	case pyfmt.Dict:
		if len(v) == 0 {
			return "the simulated response is an empty object"
		}
	case []any:
		if len(v) == 0 && (in.shape == nil || in.shape.kind != kindArray) {
			return "the simulated response is an empty list"
		}
	}
	return ""
}

// promptExampleMarks are the parts of the example response in the
// MirrorAPI system prompts (TTSKraken's "List Languages") that a simulator
// sometimes repeats for whatever API it is asked about.
var promptExampleMarks = []string{`"languages":["en","fr-fr","pt-br"]`, `'languages':['en','fr-fr','pt-br']`}

// checkPromptExample: the system prompt's own example answer is not an
// answer for another API.
func checkPromptExample(in *checkInput) string {
	if strings.EqualFold(in.doc.GroupOrCollection(), "TTSKraken") {
		return ""
	}
	text := strings.Join(strings.Fields(string(in.body)), "")
	text = strings.ReplaceAll(text, `\"`, `"`)
	for _, m := range promptExampleMarks {
		if strings.Contains(text, m) {
			return "the simulator repeated the example answer of its system prompt (TTSKraken's List Languages)"
		}
	}
	return ""
}

// minAgreement is the agreement with the documented shape below which a
// response is taken not to follow the documentation.
const minAgreement = 0.15

// checkShape: the response follows the documented response shape
// (template_response or output schema), leniently.
func checkShape(in *checkInput) string {
	s := in.shape
	if s == nil || s.kind != kindObject && s.kind != kindArray || s.kind == kindObject && len(s.fields) == 0 {
		return ""
	}
	if text, ok := in.value.(string); ok {
		if strings.TrimSpace(text) == "" {
			return "" // the empty check says it
		}
		return fmt.Sprintf("the response is plain text (%q) where the documentation shows %s", clip(text, 80), describeShape(s))
	}
	if a := agreement(s, in.value, 0); a < minAgreement {
		return fmt.Sprintf("the response (%s) does not follow the documented response %s (agreement %.2f)", describeValue(in.value), describeShape(s), a)
	}
	return ""
}

// Thresholds of the other-API check: a response is taken for another
// API's when its member names match that API's documented ones at least
// otherF1 (F1 of the two name sets) and better than its own by otherLead.
const (
	otherF1   = 0.6
	otherLead = 0.3
)

// identityKeys are members through which a response names the API or
// tool it comes from.
var identityKeys = []string{"api_name", "api", "tool_name", "tool", "function", "endpoint", "function_name"}

// checkOtherAPI: the response does not obviously belong to another API —
// it does not name another API of the same tool as its source, and its
// members do not match another API's documented response far better than
// its own.
func checkOtherAPI(in *checkInput) string {
	if len(in.neighbours) == 0 {
		return ""
	}
	own := map[string]bool{toolbench.Standardize(in.doc.TitleOrName()): true, toolbench.Standardize(in.doc.Name): true}
	if o, ok := in.value.(pyfmt.Dict); ok {
		for _, k := range identityKeys {
			v, ok := o.Get(k)
			s, isStr := v.(string)
			if !ok || !isStr || own[toolbench.Standardize(s)] {
				continue
			}
			for _, n := range in.neighbours {
				if toolbench.Standardize(s) == toolbench.Standardize(n.TitleOrName()) || toolbench.Standardize(s) == toolbench.Standardize(n.Name) {
					return fmt.Sprintf("the response names another API of the tool as its source (%s: %q)", k, s)
				}
			}
		}
	}
	text := string(in.body)
	for _, n := range in.neighbours {
		if len(n.Name) >= 8 && strings.Contains(text, n.Name) && !strings.Contains(text, in.doc.Name) && !strings.Contains(in.doc.Name, n.Name) {
			return fmt.Sprintf("the response mentions another API's function name %q", n.Name)
		}
	}
	ownF1 := keyF1(in.shape, in.value)
	best, bestName := 0.0, ""
	for _, n := range in.neighbours {
		ns := in.shapes.get(n)
		if ns == nil {
			continue
		}
		if f := keyF1(ns, in.value); f > best {
			best, bestName = f, n.TitleOrName()
		}
	}
	if best >= otherF1 && best-ownF1 >= otherLead {
		return fmt.Sprintf("the response matches the documented response of %q (member overlap %.2f) far better than this API's (%.2f)", bestName, best, ownF1)
	}
	return ""
}

// shapeCache remembers the documented shapes of the registry's tools
// (keyed by pointer: tools live as long as their collection).
type shapeCache struct {
	m sync.Map // *toolenv.Tool → *shape (nil stored as noShape)
}

var noShape = &shape{kind: kindAny}

func (c *shapeCache) get(t *toolenv.Tool) *shape {
	if v, ok := c.m.Load(t); ok {
		if v == noShape {
			return nil
		}
		return v.(*shape)
	}
	s := toolShape(t)
	if s == nil {
		c.m.Store(t, noShape)
	} else {
		c.m.Store(t, s)
	}
	return s
}

// describeShape names a shape's top-level members for messages.
func describeShape(s *shape) string {
	for s.kind == kindArray && s.elem != nil {
		if s.elem.kind != kindObject {
			return "a list"
		}
		s = s.elem
	}
	if s.kind != kindObject {
		return s.kind.String()
	}
	names := make([]string, 0, len(s.fields))
	for _, f := range s.fields {
		names = append(names, f.name)
	}
	return "with members " + clip(strings.Join(names, ", "), 120)
}

// describeValue names a response's top-level members for messages.
func describeValue(v any) string {
	switch x := v.(type) {
	case pyfmt.Dict:
		names := make([]string, 0, len(x))
		for _, m := range x {
			names = append(names, m.Key)
		}
		sort.Strings(names)
		return "members " + clip(strings.Join(names, ", "), 120)
	case []any:
		return fmt.Sprintf("a list of %d", len(x))
	}
	return kindOfValue(v).String()
}

// clip shortens s to n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
