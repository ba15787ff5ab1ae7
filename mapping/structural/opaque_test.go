package structural

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping"
)

func TestOpaqueTemplates(t *testing.T) {
	tests := []struct {
		names  []string
		opaque []string // names that must be opaque; the others must not
	}{
		{[]string{"FUNC_0", "FUNC_1", "FUNC_12", "FUNC_7"}, []string{"FUNC_0", "FUNC_1", "FUNC_12", "FUNC_7"}},
		{[]string{"ARG_1", "ARG_2", "ARG_3", "city", "units"}, []string{"ARG_1", "ARG_2", "ARG_3"}},
		{[]string{"param1", "param2", "param3"}, []string{"param1", "param2", "param3"}},
		// Numbered names that carry words are not generated.
		{[]string{"address_line1", "address_line2", "address_line3", "city"}, nil},
		{[]string{"v1_users", "v2_users", "v3_users"}, nil},
		// A few numbered names among many real ones are not a generator's.
		{[]string{"page2", "limit", "offset", "query", "sort", "city", "op_1", "op_2", "op_3"}, nil},
		// Two are not enough to tell.
		{[]string{"FUNC_1", "FUNC_2"}, nil},
		{nil, nil},
	}
	for _, tt := range tests {
		names := map[string]bool{}
		for _, n := range tt.names {
			names[n] = true
		}
		tmpl := opaqueTemplates(names)
		want := map[string]bool{}
		for _, n := range tt.opaque {
			want[n] = true
		}
		for _, n := range tt.names {
			if got := isOpaque(n, tmpl); got != want[n] {
				t.Errorf("%v: isOpaque(%s) = %v", tt.names, n, got)
			}
		}
	}
}

func TestWithoutMentions(t *testing.T) {
	opaque := func(s string) bool { return strings.HasPrefix(s, "ARG_") }
	tests := []struct {
		desc   string
		idents []string
		want   string
	}{
		// A backticked argument is a reference, whatever its spelling;
		// the column named like it (a path segment) is content.
		{"rows where superhero.superhero_name equals `superhero_name`.", []string{"superhero_name"},
			"rows where superhero.superhero_name equals ` `."},
		{"rows where superhero.superhero_name equals `ARG_34`.", []string{"ARG_34"},
			"rows where superhero.superhero_name equals ` `."},
		// A plain word in prose stays; the same word marked as code goes.
		{"the gender of the hero, where gender.gender equals `gender`", []string{"gender"},
			"the gender of the hero, where gender.gender equals ` `"},
		// An identifier-looking mention goes even unmarked.
		{"filters by max_height then sorts", []string{"max_height"}, "filters by   then sorts"},
		{"see {city} and :units", []string{"city", "units"}, "see { } and : "},
		// Opaque tokens go wherever they stand alone.
		{"calls ARG_7 twice", nil, "calls   twice"},
		// A name that is not the tool's own stays.
		{"rows where `other` is set", []string{"city"}, "rows where `other` is set"},
		{"", []string{"x"}, ""},
		{"ünïcode `größe` ok", []string{"größe"}, "ünïcode ` ` ok"},
		// An argument's own path is a mention, dotted or not; a path of
		// generated names too; a table.column is content.
		{"add operation_args.value or column operation_args.other_key_name.", []string{"operation_args", "operation_args.value", "operation_args.other_key_name"},
			"add   or column  ."},
		{"add ARG_13.ARG_1 or column ARG_13.ARG_7.", nil, "add   or column  ."},
		{"where team.city equals `city`", []string{"city"}, "where team.city equals ` `"},
	}
	for _, tt := range tests {
		ids := map[string]bool{}
		for _, s := range tt.idents {
			ids[s] = true
		}
		if got := withoutMentions(tt.desc, ids, opaque); got != tt.want {
			t.Errorf("withoutMentions(%q) = %q, want %q", tt.desc, got, tt.want)
		}
	}
}

// adversarialAPI generates a REST API over a random schema whose
// endpoints are hard to tell apart: tables sharing column names, columns
// of one type, near-duplicate endpoints that differ in one filter column
// or in the order of their result columns, and endpoints whose every word
// is common to most of the API. Each endpoint's description names the
// columns it returns and filters on, and its arguments by name, as
// generated REST APIs do.
func adversarialAPI(r *rand.Rand, coll string) []*toolenv.Tool {
	shared := []string{"name", "code", "status", "region"}
	own := []string{"height", "weight", "score", "rank", "budget", "cost", "speed", "power", "age", "size", "capacity", "length"}
	type table struct {
		name string
		cols []string
	}
	var tables []table
	for i, tn := range []string{"team", "player", "venue", "league"} {
		cols := append([]string{"id"}, shared[:2+r.IntN(3)]...)
		for _, c := range r.Perm(len(own))[:4] {
			cols = append(cols, own[c]+fmt.Sprintf("_%c", 'a'+i))
		}
		tables = append(tables, table{tn, cols})
	}
	seen := map[string]bool{}
	var tools []*toolenv.Tool
	add := func(tb table, outs, filters []string) {
		name := "get_" + strings.Join(outs, "_and_")
		if len(filters) > 0 {
			name += "_by_" + strings.Join(filters, "_and_")
		}
		name += "_of_" + tb.name
		if seen[name] {
			return
		}
		seen[name] = true
		qual := make([]string, len(outs))
		for i, o := range outs {
			qual[i] = tb.name + "." + o
		}
		desc := "Returns " + strings.Join(qual, ", ") + " from " + tb.name
		in := &toolenv.Schema{Type: "object", Properties: map[string]*toolenv.Schema{}}
		if len(filters) > 0 {
			var conds []string
			for _, f := range filters {
				conds = append(conds, fmt.Sprintf("%s.%s equals `%s`", tb.name, f, f))
				typ := "integer"
				if f == "name" || f == "code" || f == "status" || f == "region" {
					typ = "string"
				}
				in.SetProp(f, &toolenv.Schema{Type: typ, Description: fmt.Sprintf("The %s (%s.%s): the rows where it equals this value.", strings.ReplaceAll(f, "_", " "), tb.name, f)})
				in.Required = append(in.Required, f)
			}
			desc += ", for the rows where " + strings.Join(conds, " and ")
		}
		out := &toolenv.Schema{Type: "object", Description: "The rows the query returns; columns: " + strings.Join(outs, "; "),
			Properties: map[string]*toolenv.Schema{}}
		out.SetProp("columns", &toolenv.Schema{Type: "array", Description: "result column names", Items: &toolenv.Schema{Type: "string"}})
		out.SetProp("rows", &toolenv.Schema{Type: "array", Description: "the rows, each a list of values in column order", Items: &toolenv.Schema{Type: "array"}})
		tools = append(tools, &toolenv.Tool{ID: coll + "/" + name, Collection: coll, Name: name, Description: desc + ".", Group: "db", Input: in, Output: out})
	}
	for _, tb := range tables {
		cols := tb.cols[1:]
		for k := 0; k < 6; k++ {
			o := cols[r.IntN(len(cols))]
			f1, f2 := cols[r.IntN(len(cols))], cols[r.IntN(len(cols))]
			if f1 == o || f2 == o || f1 == f2 {
				continue
			}
			// Near duplicates: one filter column apart.
			add(tb, []string{o}, []string{f1})
			add(tb, []string{o}, []string{f2})
			// The same columns in another order.
			add(tb, []string{o, f1}, nil)
			add(tb, []string{f1, o}, nil)
		}
		// An endpoint in the API's most common words only.
		add(tb, []string{"name"}, []string{"id"})
	}
	return tools
}

// obfuscate renames an API as toolenv build --obfuscate does: tools to
// FUNC_n in a shuffled order, arguments to ARG_n (one per original name),
// the backticked mentions of arguments rewritten, titles dropped.
// want maps each original tool ID to its obfuscated one.
func obfuscate(r *rand.Rand, tools []*toolenv.Tool, coll string) (out []*toolenv.Tool, want map[string]string, args map[string]string) {
	want, args = map[string]string{}, map[string]string{}
	perm := r.Perm(len(tools))
	for i, t := range tools {
		n := t.Clone()
		n.Collection, n.Name, n.Title = coll, fmt.Sprintf("FUNC_%d", perm[i]), ""
		n.ID = coll + "/" + n.Name
		in := &toolenv.Schema{Type: "object", Properties: map[string]*toolenv.Schema{}}
		for _, p := range t.Input.Names() {
			a, ok := args[p]
			if !ok {
				a = fmt.Sprintf("ARG_%d", len(args))
				args[p] = a
			}
			in.SetProp(a, t.Input.Properties[p])
			if t.Input.IsRequired(p) {
				in.Required = append(in.Required, a)
			}
			n.Description = strings.ReplaceAll(n.Description, "`"+p+"`", "`"+a+"`")
		}
		n.Input = in
		want[t.ID] = n.ID
		out = append(out, n)
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, want, args
}

// TestBetweenObfuscated maps generated adversarial APIs onto their
// obfuscated copies: every endpoint must find its copy and every
// argument its renamed self, from what the documentation still says.
func TestBetweenObfuscated(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			api := adversarialAPI(r, "api")
			obf, want, args := obfuscate(r, api, "api-obfuscated")
			m := New(append(append([]*toolenv.Tool(nil), api...), obf...), nil, Options{})
			got, err := m.Between(context.Background(), "api", "api-obfuscated")
			if err != nil {
				t.Fatal(err)
			}
			mapped := map[string]bool{}
			for _, mp := range got {
				mapped[mp.From] = true
				if mp.To != want[mp.From] {
					t.Errorf("%s → %s, want %s (%s)", mp.From, mp.To, want[mp.From], mp.Reasoning)
					continue
				}
				for _, p := range mp.Inputs {
					if args[p.From] != p.To {
						t.Errorf("%s: argument %s → %s, want %s", mp.From, p.From, p.To, args[p.From])
					}
				}
			}
			for _, tl := range api {
				if !mapped[tl.ID] {
					t.Errorf("%s not mapped", tl.ID)
				}
			}
			if t.Failed() {
				t.Logf("%d endpoints", len(api))
			}
		})
	}
}

// TestCommonWordsStillFindCandidates: a tool described only in words
// most tools share still has candidates.
func TestCommonWordsStillFindCandidates(t *testing.T) {
	var tools []*toolenv.Tool
	for i, extra := range []string{"", "colour", "weight", "height", "speed", "power"} {
		for _, coll := range []string{"a", "b"} {
			desc := "Returns hero.name from hero, for the rows where hero.id equals the identifier"
			if extra != "" {
				desc = "Returns hero.name and hero." + extra + " from hero, for the rows where hero.id equals the identifier"
			}
			name := fmt.Sprintf("FUNC_%d", i)
			if coll == "a" {
				name = "get_hero_name_by_id"
				if extra != "" {
					name = "get_hero_name_and_" + extra + "_by_id"
				}
			}
			tools = append(tools, &toolenv.Tool{ID: coll + "/" + name, Collection: coll, Name: name, Description: desc,
				Input: &toolenv.Schema{Type: "object", Properties: map[string]*toolenv.Schema{"id": {Type: "integer", Description: "hero id"}}}})
		}
	}
	m := New(tools, nil, Options{Candidates: 3})
	got, err := m.Between(context.Background(), "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mp := range got {
		if mp.From == "a/get_hero_name_by_id" {
			found = mp.To == "b/FUNC_0"
		}
	}
	if !found {
		t.Fatalf("a/get_hero_name_by_id (common words only) not mapped to b/FUNC_0: %v", got)
	}
}

// TestRanked: every candidate at or above the floor, best first, and
// what Between chose among them.
func TestRanked(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 7))
	api := adversarialAPI(r, "api")
	obf, _, _ := obfuscate(r, api, "api-obfuscated")
	m := New(append(append([]*toolenv.Tool(nil), api...), obf...), nil, Options{})
	ranked, err := m.Ranked(context.Background(), "api", "api-obfuscated", 0.3)
	if err != nil {
		t.Fatal(err)
	}
	chosen, err := m.Between(context.Background(), "api", "api-obfuscated")
	if err != nil {
		t.Fatal(err)
	}
	for _, mp := range chosen {
		list := ranked[mp.From]
		found := false
		for i, c := range list {
			if c.Score < 0.3 || (i > 0 && c.Score > list[i-1].Score) || !strings.HasPrefix(c.To, "api-obfuscated/") {
				t.Errorf("%s: candidate %d %s %.3f out of order or below the floor", mp.From, i, c.To, c.Score)
			}
			found = found || c.To == mp.To
		}
		if !found || len(list) < 2 {
			t.Errorf("%s: Between's %s not among %d ranked candidates", mp.From, mp.To, len(list))
		}
	}
}

// TestProseReadTwice: mentions of arguments are read both ways — a
// renamed argument is the same reference (removed), and two tools that
// name their arguments alike share those words (kept).
func TestProseReadTwice(t *testing.T) {
	args := func(names ...string) *toolenv.Schema {
		s := &toolenv.Schema{Type: "object", Properties: map[string]*toolenv.Schema{}}
		for _, n := range names {
			s.SetProp(n, &toolenv.Schema{Type: "string"})
		}
		return s
	}
	tools := []*toolenv.Tool{
		{ID: "a/keep_greater", Collection: "a", Name: "keep_greater", Description: "Keep the rows whose column `key_name` is greater than `value`.", Input: args("key_name", "value")},
		{ID: "b/filter", Collection: "b", Name: "filter", Description: "Keep the rows whose column `key_name` matches `value` under `condition`.", Input: args("key_name", "value", "condition")},
	}
	for i := 0; i < 3; i++ {
		tools = append(tools, &toolenv.Tool{ID: fmt.Sprintf("c/FUNC_%d", i), Collection: "c", Name: fmt.Sprintf("FUNC_%d", i),
			Description: fmt.Sprintf("Keep the rows whose column `ARG_%d` is greater than `ARG_%d`.", 2*i, 2*i+1), Input: args(fmt.Sprintf("ARG_%d", 2*i), fmt.Sprintf("ARG_%d", 2*i+1))})
	}
	m := New(tools, nil, Options{})
	a, b, c := m.Profile("a/keep_greater"), m.Profile("b/filter"), m.Profile("c/FUNC_0")
	without := proseSimilarity(stripped(a), stripped(b))
	if got := textSimilarity(a, b); got <= without {
		t.Errorf("alike-named arguments: %.3f, no more than without the mentions (%.3f)", got, without)
	}
	if got := textSimilarity(a, c); got != 1 {
		t.Errorf("renamed arguments: %.3f, want 1 (the same text but for the mentions)", got)
	}
}

// TestProseOperatorsAndNegation: two texts that differ only in an
// operator or a negation are told apart.
func TestProseOperatorsAndNegation(t *testing.T) {
	tests := []struct{ a, b string }{
		{"Arithmetic on two values: left + right. Returns a value.", "Arithmetic on two values: left * right. Returns a value."},
		{"Keep the rows whose column is null. Returns a table.", "Keep the rows whose column is not null. Returns a table."},
		{"Rows where the count > 3.", "Rows where the count <= 3."},
	}
	for _, tt := range tests {
		var tools []*toolenv.Tool
		for i, d := range []string{tt.a, tt.b, tt.a} {
			coll := "x"
			if i == 2 {
				coll = "y"
			}
			tools = append(tools, &toolenv.Tool{ID: fmt.Sprintf("%s/t%d", coll, i), Collection: coll, Name: fmt.Sprintf("t%d", i), Description: d})
		}
		m := New(tools, nil, Options{})
		same, other := textSimilarity(m.Profile("y/t2"), m.Profile("x/t0")), textSimilarity(m.Profile("y/t2"), m.Profile("x/t1"))
		if same != 1 || other >= 0.95 {
			t.Errorf("%q vs %q: same text %.3f, other %.3f", tt.a, tt.b, same, other)
		}
	}
}

// TestRunOnEveryCore: the runs compare on every core and give the
// mappings one core gives (the pairs; a score may differ in its last digit
// from run to run on one core too: TF-IDF sums follow map order), and the
// progress reaches every tool, never going back.
func TestRunOnEveryCore(t *testing.T) {
	var tools []*toolenv.Tool
	for seed := uint64(1); seed <= 3; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		api := adversarialAPI(r, fmt.Sprintf("api%d", seed))
		obf, _, _ := obfuscate(r, api, fmt.Sprintf("api%d-obfuscated", seed))
		tools = append(append(tools, api...), obf...)
	}
	runs := func(t *testing.T) string {
		t.Helper()
		var last int
		m := New(tools, nil, Options{Progress: func(done, total int) {
			if done <= last || done > total {
				t.Errorf("progress %d of %d after %d", done, total, last)
			}
			last = done
		}})
		var b strings.Builder
		ctx := context.Background()
		for _, run := range []struct {
			name string
			fn   func() ([]*mapping.Mapping, error)
		}{
			{"between 1", func() ([]*mapping.Mapping, error) { return m.Between(ctx, "api1", "api1-obfuscated") }},
			{"between 2", func() ([]*mapping.Mapping, error) { return m.Between(ctx, "api2-obfuscated", "api2") }},
			{"between 3", func() ([]*mapping.Mapping, error) { return m.Between(ctx, "api3", "api3-obfuscated") }},
		} {
			last = 0
			got, err := run.fn()
			if err != nil {
				t.Fatal(err)
			}
			if last != len(tools) {
				t.Errorf("%s: progress ended at %d of %d", run.name, last, len(tools))
			}
			fmt.Fprintf(&b, "%s:", run.name)
			for _, mp := range got {
				fmt.Fprintf(&b, " %s→%s", mp.From, mp.To)
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	prev := runtime.GOMAXPROCS(1)
	one := runs(t)
	runtime.GOMAXPROCS(8)
	many := runs(t)
	runtime.GOMAXPROCS(prev)
	if one != many {
		t.Errorf("on 8 cores the mappings differ from one core's:\n%s\nvs\n%s", many, one)
	}
	if strings.Count(one, "→") < 10 {
		t.Errorf("few mappings made: %s", one)
	}
}

// TestParallel: every index is done once, on several goroutines at
// once, and a cancelled context ends the work early with its error.
func TestParallel(t *testing.T) {
	prev := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(prev)
	const n = 1000
	var counts [n]atomic.Int32
	var running, most atomic.Int32
	release := make(chan struct{})
	go func() {
		for most.Load() < 2 {
			runtime.Gosched()
		}
		close(release)
	}()
	if err := parallel(context.Background(), n, func(k int) {
		if r := running.Add(1); r > most.Load() {
			most.Store(r)
		}
		if k == 0 {
			<-release // the others go on meanwhile
		}
		counts[k].Add(1)
		running.Add(-1)
	}); err != nil {
		t.Fatal(err)
	}
	for k := range counts {
		if c := counts[k].Load(); c != 1 {
			t.Fatalf("index %d done %d times", k, c)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var done atomic.Int32
	err := parallel(ctx, n, func(k int) {
		switch d := done.Add(1); {
		case d == 10:
			cancel()
		case d > 10:
			// A call begun after the tenth ends only once the
			// cancellation is made, so no worker can run through the rest
			// while the tenth's goroutine waits for a CPU to cancel on.
			<-ctx.Done()
		}
	})
	// Each worker finishes the call it holds, then stops.
	if !errors.Is(err, context.Canceled) || done.Load() > 10+int32(runtime.GOMAXPROCS(0)) {
		t.Errorf("cancelled after 10: err %v, %d done", err, done.Load())
	}
}
