package nl2api_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sqlc-dev/meyer/ast"
	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/agent"
	"github.com/toolenv/toolenv/backend/sqlrest"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/eval"
	"github.com/toolenv/toolenv/eval/harness"
	"github.com/toolenv/toolenv/nl2api"
	"github.com/toolenv/toolenv/nl2api/answer"
	"github.com/toolenv/toolenv/nl2api/bird"
	"github.com/toolenv/toolenv/nl2api/nl2apitest"
	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

var (
	genSeeds = flag.Int("gen.seeds", 3, "how many generated corpora TestGeneratedCorpora builds and serves (seeds gen.first, gen.first+1, ...)")
	genFirst = flag.Uint64("gen.first", 1, "the first seed of TestGeneratedCorpora")
	genBig   = flag.Int("gen.big", 10050, "rows of the table over the row cap in the first corpus (0: none)")
)

// knownGaps are (kind, flavor) pairs a build may still reject; each is
// an open item of issue 9.
var knownGaps = map[[2]string]string{}

func gap(kind, flavor string) bool { _, ok := knownGaps[[2]string{kind, flavor}]; return ok }

// TestGeneratedCorpora is the property test over adversarial corpora:
// for every seed, the build succeeds, keeps what it must, rejects what
// it must with the expected stage, and every task it keeps, in every
// flavor and variant, replays to its gold answer over HTTP through the
// real server. More seeds: go test ./nl2api -run Generated -gen.seeds 50.
func TestGeneratedCorpora(t *testing.T) {
	for i := 0; i < *genSeeds; i++ {
		seed := *genFirst + uint64(i)
		big := 0
		if i == 0 {
			big = *genBig
		}
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { checkGenerated(t, seed, big) })
	}
}

func checkGenerated(t *testing.T, seed uint64, big int) {
	ctx := context.Background()
	data, out := t.TempDir(), t.TempDir()
	corpus, err := nl2apitest.Generate(data, nl2apitest.Options{Seed: seed, BigRows: big})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := nl2api.Build(ctx, nl2api.Options{ImageCache: imageCache, Data: data, Out: out, Obfuscate: true, Seed: int64(seed), Workers: 2})
	if err != nil {
		t.Fatalf("the build failed (it must never fail because of a question): %v", err)
	}
	// What must be kept is kept; what must be rejected is, at its stage.
	for _, f := range rep.Flavors {
		rejected := map[int]nl2api.Rejected{}
		stage := map[int]string{}
		for _, g := range f.Rejections {
			for _, q := range g.Questions {
				rejected[q.ID] = q
				stage[q.ID] = g.Stage + ": " + g.Reason
			}
		}
		for _, q := range corpus.Questions {
			r, isRejected := rejected[q.ID]
			if must := q.MustReject(f.Flavor); must != "" {
				if !isRejected || !strings.HasPrefix(stage[q.ID], must+":") || q.RejectReason != "" && stage[q.ID] != must+": "+q.RejectReason {
					t.Errorf("%s: question %d (%s) must be rejected at stage %q (%s), got %q", f.Flavor, q.ID, q.Kind, must, q.RejectReason, stage[q.ID])
				}
				continue
			}
			if isRejected && contains(q.Keep, f.Flavor) && !gap(q.Kind, f.Flavor) {
				t.Errorf("%s: question %d (%s) rejected: %s: %s\n  SQL: %s", f.Flavor, q.ID, q.Kind, stage[q.ID], r.Detail, q.SQL)
			}
		}
	}
	checkText(t, out, true)
	for _, f := range nl2api.Flavors {
		checkHonest(t, filepath.Join(out, f))
	}
	dataNames := generatedNames(t, corpus, out, nl2api.Flavors)
	for _, f := range nl2api.Flavors {
		checkObfuscated(t, filepath.Join(out, f+"-obfuscated"), dataNames)
	}
	// Every kept task replays over HTTP to its gold answer, and the gold
	// answer is what SQLite computes on the file itself.
	var dirs []string
	for _, f := range nl2api.Flavors {
		dirs = append(dirs, filepath.Join(out, f), filepath.Join(out, f+"-obfuscated"))
	}
	served, err := nl2apitest.Serve(ctx, dirs...)
	if err != nil {
		t.Fatal(err)
	}
	defer served.Close()
	files := map[string]*sql.DB{}
	for _, db := range corpus.Databases {
		h, err := sql.Open("sqlite", "file:"+bird.Layout{Dir: data}.Database(db)+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		files[db] = h
	}
	replayed := 0
	for name, c := range served.Collections {
		for _, task := range served.Tasks[name] {
			var gold answer.Table
			if err := toolenv.DecodeJSON(task.Answer, &gold); err != nil {
				t.Fatalf("%s %s: answer: %v", name, task.ID, err)
			}
			// An agent sees the task's tools only: every gold call must
			// name one of them.
			for _, g := range task.Gold {
				if !slices.Contains(task.Tools, g.Name) {
					t.Errorf("%s %s: gold call %s (%s) names a tool the task does not offer", name, task.ID, g.Name, g.Label)
				}
			}
			ordered, _ := task.Meta[sqltools.MetaOrdered].(bool)
			if want, err := runSQL(files[task.Group], task.Meta["sql"].(string)); err != nil {
				t.Errorf("%s %s: gold SQL on the file: %v", name, task.ID, err)
			} else if ok, why := answer.Equal(want, &gold, answer.Options{Ordered: ordered}); !ok {
				t.Errorf("%s %s: the task's answer is not what SQLite computes on the file: %s", name, task.ID, why)
			}
			got, err := served.Replay(ctx, c, task, "s-"+task.ID)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if ok, why := answer.Equal(&gold, got, answer.Options{Ordered: ordered}); !ok {
				t.Errorf("%s %s: over HTTP the answer differs: %s\n  SQL: %s", name, task.ID, why, task.Meta["sql"])
			}
			replayed++
		}
	}
	if replayed == 0 {
		t.Fatal("no task was replayed")
	}
	// The evaluation's path too: the oracle agent, through a remote
	// environment over HTTP, completes every kept task of every flavor
	// and variant (a tool parameter named after a column called label,
	// session, ... is the API's argument, never toolenv's label).
	for name, c := range served.Collections {
		env := agent.NewRemote(served.URL, agent.RemoteOptions{TaskTools: harness.TaskTools, Collections: []*toolenv.Collection{c}})
		res, err := eval.Run(ctx, eval.Config{Tasks: served.Tasks[name], Collections: map[string]*toolenv.Collection{name: c},
			Env: env, Agent: agent.Oracle{}, ModelName: "oracle", Concurrency: 2, Out: t.TempDir()})
		if err != nil {
			t.Fatalf("%s: eval: %v", name, err)
		}
		if len(res.Episodes) != len(served.Tasks[name]) {
			t.Errorf("%s: %d episodes of %d tasks", name, len(res.Episodes), len(served.Tasks[name]))
		}
		for _, e := range res.Episodes {
			if !e.Score.Completed {
				t.Errorf("%s %s: the oracle does not complete it in evaluation: %s", name, e.TaskID, e.Score.AnswerError)
			}
		}
	}
	t.Logf("seed %d: %d questions, %d tasks replayed over HTTP; kept slot/sel/rest %d/%d/%d", seed, len(corpus.Questions), replayed,
		rep.Flavor("slot").Kept, rep.Flavor("sel").Kept, rep.Flavor("rest").Kept)
}

// generatedNames are the data's own names in a built generated corpus,
// lower-cased: its tables and columns, the tasks' starting-table columns
// and answer columns. Obfuscation keeps them, as the data does.
func generatedNames(t *testing.T, corpus *nl2apitest.Corpus, out string, flavors []string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, n := range corpus.Identifiers {
		names[strings.ToLower(n)] = true
	}
	for _, f := range flavors {
		addTaskNames(t, names, filepath.Join(out, f))
	}
	return names
}

// addTaskNames adds to names, lower-cased, the starting-table columns and
// the answer columns of the tasks in the collection folder dir: names the
// data gives, which obfuscation keeps.
func addTaskNames(t *testing.T, names map[string]bool, dir string) {
	t.Helper()
	tasks, _, err := toolenv.ReadTasks(filepath.Join(dir, toolenv.TasksFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		cols, _ := sqltools.TaskColumns(task)
		for _, c := range cols {
			names[strings.ToLower(c.Name)] = true
		}
		// The names of the answer's columns are the response's.
		if gold, err := answer.Gold(task.Answer); err == nil {
			for _, c := range gold.Columns {
				names[strings.ToLower(c)] = true
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// runSQL runs a query on a database file and returns its answer.
func runSQL(db *sql.DB, q string) (*answer.Table, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	out := &answer.Table{Columns: cols}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		out.Rows = append(out.Rows, vals)
	}
	return out, rows.Err()
}

// Over HTTP, a value starting with an unencoded '#' arrives empty (the
// rest of the URL is a fragment): an equality parameter refuses it with a hint about
// percent-encoding, where it used to return no rows; percent-encoded, the
// same call answers.
func TestRESTUnencodedValueOverHTTP(t *testing.T) {
	ctx := context.Background()
	data, out := t.TempDir(), t.TempDir()
	if _, err := nl2apitest.Generate(data, nl2apitest.Options{Seed: 11}); err != nil {
		t.Fatal(err)
	}
	if _, err := nl2api.Build(ctx, nl2api.Options{ImageCache: imageCache, Data: data, Out: out, Flavors: []string{nl2api.Rest}}); err != nil {
		t.Fatal(err)
	}
	served, err := nl2apitest.Serve(ctx, filepath.Join(out, "rest"))
	if err != nil {
		t.Fatal(err)
	}
	defer served.Close()
	c := served.Collections["bird-rest"]
	tried := 0
	for _, task := range served.Tasks["bird-rest"] {
		g := task.Gold[0]
		tool := c.Tool(g.Name)
		for name, v := range g.Args {
			s, ok := v.(string)
			if !ok || len(g.Args) != 1 || !strings.Contains(tool.Meta["non_empty"], `"`+name+`"`) {
				continue
			}
			tried++
			// A value starting with '#', as a careless client writes it.
			raw := served.URL + tool.Binding.Path + "?" + name + "=#" + url.QueryEscape(s)
			resp, err := http.Get(raw)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "%23") || !strings.Contains(string(body), name) {
				t.Errorf("%s?%s=%s unencoded: HTTP %d %s", tool.Binding.Path, name, s, resp.StatusCode, body)
			}
			ok2, err := served.Call(ctx, c, tool, g.Args, "")
			if err != nil || ok2.Status != http.StatusOK {
				t.Errorf("encoded: %v %v", err, ok2)
			}
		}
	}
	if tried == 0 {
		t.Fatal("no REST task has one text equality parameter (the generator should make some)")
	}
}

// checkText checks every file of a build: tool and argument names are
// ASCII identifiers of at most 64 bytes, titles keep the database's
// Unicode where names were transliterated, and no C1 control character
// (a Windows-1252 file read as Latin-1) reaches any file.
func checkText(t *testing.T, out string, unicodeNames bool) {
	t.Helper()
	ident := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
	unicodeTitles := 0
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, r := range string(data) {
			if r >= 0x80 && r < 0xA0 {
				t.Errorf("%s holds the C1 control %U", p, r)
				break
			}
		}
		if filepath.Base(p) != "tools.json" {
			return nil
		}
		var tools []*toolenv.Tool
		if err := toolenv.DecodeJSON(data, &tools); err != nil {
			return err
		}
		for _, tl := range tools {
			if !ident.MatchString(tl.Name) {
				t.Errorf("%s: tool name %q is no ASCII identifier of at most 64 bytes", p, tl.Name)
			}
			for _, a := range tl.Input.Names() {
				if !ident.MatchString(a) {
					t.Errorf("%s: %s: argument %q is no ASCII identifier", p, tl.Name, a)
				}
			}
			if strings.ContainsFunc(tl.Title, func(r rune) bool { return r > 0x7F }) {
				unicodeTitles++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if unicodeNames && unicodeTitles == 0 {
		t.Error("no tool title keeps the Unicode of the generated names")
	}
}

// sqlCall matches SQL function-call text (AVG(, COUNT(, CAST( …).
var sqlCall = regexp.MustCompile(`\b[A-Z][A-Z_]*\(`)

// checkHonest checks that the tasks of a built collection can be solved
// honestly: no two tools share a description and parameters; a REST
// endpoint's description states every constant its SQL computes with
// (no hidden constants) and its response columns and output description
// hold no SQL text; no broken phrases.
func checkHonest(t testing.TB, dir string) {
	t.Helper()
	c, err := toolenv.ReadCollection(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, tl := range c.Tools {
		var params []string
		for _, n := range tl.Input.Names() {
			params = append(params, n+":"+tl.Input.Prop(n).Description)
		}
		key := tl.Description + "\x00" + strings.Join(params, "\x00")
		if other, dup := seen[key]; dup {
			t.Errorf("%s: %s and %s share their description and parameters: %q", c.Name, other, tl.Name, tl.Description)
		}
		seen[key] = tl.Name
		texts := []string{tl.Description}
		for _, n := range tl.Input.Names() {
			texts = append(texts, tl.Input.Prop(n).Description)
		}
		for _, s := range texts {
			for _, bad := range []string{"values this value", "this value this value", "value value"} {
				if strings.Contains(s, bad) {
					t.Errorf("%s %s: broken phrase %q in %q", c.Name, tl.Name, bad, s)
				}
			}
		}
		sqlText := tl.Meta[sqlrest.MetaSQL]
		if sqlText == "" {
			continue
		}
		if tl.Output != nil && sqlCall.MatchString(tl.Output.Description) {
			t.Errorf("%s %s: SQL text in the output description %q", c.Name, tl.Name, tl.Output.Description)
		}
		for _, lit := range constants(t, sqlText) {
			if !strings.Contains(tl.Description, lit) {
				t.Errorf("%s %s: the constant %q of its SQL is not in its description (a hidden constant)\n  SQL: %s\n  description: %s", c.Name, tl.Name, lit, sqlText, tl.Description)
			}
		}
	}
}

// constants returns the text of the literals a SQL template computes
// with, but for strftime formats, ORDER BY positions and LIMIT 1 (which
// descriptions put in words).
func constants(t testing.TB, q string) []string {
	t.Helper()
	stmt, err := sqlplan.Parse(q)
	if err != nil {
		t.Fatalf("template does not parse: %v\n%s", err, q)
	}
	skip := map[ast.Node]bool{}
	var out []string
	ast.Walk(stmt, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncCall:
			if strings.EqualFold(x.Name.Name, "strftime") && len(x.Args) > 0 {
				skip[x.Args[0]] = true
			}
		case *ast.OrderingTerm:
			skip[x.Expr] = true
		case *ast.Limit:
			if l, ok := x.Count.(*ast.Literal); ok && l.Raw == "1" {
				skip[x.Count] = true
			}
		case *ast.Literal:
			if !skip[x] && x.Kind != ast.LitNull {
				out = append(out, x.Value)
			}
		}
		return true
	})
	return out
}

// checkObfuscated checks that nothing of the original tool and argument
// names survives in an obfuscated collection's files: no key, no
// `backticked` mention, no identifier with an underscore (but the data's
// own table and column names, which the data keeps), no title. The
// mapping lives beside the folder. Hidden tools (the init step) and the
// label argument keep their names by design.
func checkObfuscated(t testing.TB, dir string, data map[string]bool) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "obfuscation.json")); err == nil {
		t.Errorf("%s: the mapping is inside the collection's folder", dir)
	}
	ob, err := sqltools.ReadObfuscation(nl2api.MappingFile(dir))
	if err != nil {
		t.Fatal(err)
	}
	orig := map[string]bool{}
	for _, n := range ob.Tools {
		orig[n] = true
	}
	for _, n := range ob.Arguments {
		orig[n] = true
	}
	leak := func(where, s string) {
		for _, w := range regexp.MustCompile("`[^`]*`|[A-Za-z_][A-Za-z0-9_]*").FindAllString(s, -1) {
			// In SQL (a task's gold SQL), backticks quote the data's names.
			bt := strings.HasPrefix(w, "`") && !strings.HasSuffix(where, ".meta.sql")
			w = strings.Trim(w, "`")
			if orig[w] && (bt || strings.Contains(w, "_") && !data[strings.ToLower(w)]) {
				t.Errorf("%s: original name %q survives in %s: %q", filepath.Base(dir), w, where, s)
			}
		}
	}
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if x["meta"] != nil {
				if m, ok := x["meta"].(map[string]any); ok && m["hidden"] == "true" {
					return // the hidden init tool keeps its names
				}
			}
			for k, e := range x {
				if k == "init" && strings.HasSuffix(where, ".meta") {
					continue // the hidden init calls
				}
				// Argument names are the keys of input properties and of
				// gold arguments (schema keywords and response fields are
				// no arguments).
				named := strings.HasSuffix(where, ".arguments") || strings.HasSuffix(where, ".properties") &&
					(strings.Contains(where, ".input") || strings.Contains(where, ".parameters") || strings.Contains(where, "requestBody"))
				if orig[k] && named {
					t.Errorf("%s: original name %q is a key in %s", filepath.Base(dir), k, where)
				}
				walk(where+"."+k, e)
			}
		case []any:
			for _, e := range x {
				walk(where, e)
			}
		case string:
			leak(where, x)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if !strings.HasSuffix(e.Name(), ".jsonl") && i > 0 {
				break
			}
			if strings.HasSuffix(e.Name(), ".jsonl") {
				data = []byte(line)
			}
			if len(strings.TrimSpace(string(data))) == 0 {
				continue
			}
			v, err := toolenv.ParseJSON(data)
			if err != nil {
				t.Fatalf("%s: %v", e.Name(), err)
			}
			walk(e.Name(), v)
		}
	}
	c, err := toolenv.ReadCollection(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range c.Listed() {
		if tl.Title != "" {
			t.Errorf("%s: tool %s has title %q", c.Name, tl.Name, tl.Title)
		}
		for _, n := range tl.Input.Names() {
			if tl.Input.Prop(n).Title != "" {
				t.Errorf("%s: %s.%s has title %q", c.Name, tl.Name, n, tl.Input.Prop(n).Title)
			}
		}
	}
}

// recorder collects a checker's errors instead of failing the test.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Errorf(f string, args ...any) { r.errs = append(r.errs, fmt.Sprintf(f, args...)) }

// The checkers the property test relies on find what they look for: on a
// built and obfuscated generated corpus they report nothing, and each
// report the defect planted in a copy (an original tool name in a
// description, an original argument name as a parameter, a title, two
// tools with one description and the same parameters, a hidden constant).
func TestCheckersCatchDefects(t *testing.T) {
	ctx := context.Background()
	data, out := t.TempDir(), t.TempDir()
	corpus, err := nl2apitest.Generate(data, nl2apitest.Options{Seed: 21})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nl2api.Build(ctx, nl2api.Options{ImageCache: imageCache, Data: data, Out: out, Flavors: []string{nl2api.Rest}, Obfuscate: true}); err != nil {
		t.Fatal(err)
	}
	names := generatedNames(t, corpus, out, []string{nl2api.Rest})
	clean := filepath.Join(out, "rest-obfuscated")
	ob, err := sqltools.ReadObfuscation(nl2api.MappingFile(clean))
	if err != nil {
		t.Fatal(err)
	}
	var origTool, origArg, newArg string
	for _, n := range ob.Tools {
		origTool = n
		break
	}
	for obf, n := range ob.Arguments {
		if strings.Contains(n, "_") && !names[strings.ToLower(n)] || origArg == "" {
			origArg, newArg = n, obf
		}
	}
	// plant copies the folder and its mapping, and changes the tools.
	plant := func(src, name string, change func(tools []map[string]any) []map[string]any) string {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		if raw, err := os.ReadFile(nl2api.MappingFile(src)); err == nil {
			if err := os.WriteFile(nl2api.MappingFile(dir), raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var tools []map[string]any
		var raw []byte
		var err error
		if raw, err = os.ReadFile(filepath.Join(dir, "tools.json")); err != nil {
			t.Fatal(err)
		}
		if err := toolenv.DecodeJSON(raw, &tools); err != nil {
			t.Fatal(err)
		}
		if raw, err = json.Marshal(change(tools)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "tools.json"), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	obfuscated := func(dir string) []string {
		r := &recorder{TB: t}
		checkObfuscated(r, dir, names)
		return r.errs
	}
	honest := func(dir string) []string {
		r := &recorder{TB: t}
		checkHonest(r, dir)
		return r.errs
	}
	plain := filepath.Join(out, "rest")
	if errs := append(append(obfuscated(clean), honest(clean)...), honest(plain)...); len(errs) > 0 {
		t.Fatalf("the clean build is reported: %q", errs)
	}
	if origTool == "" || origArg == "" {
		t.Fatal("the mapping names no tool or argument")
	}
	for _, c := range []struct {
		src, name, want string
		check           func(string) []string
		change          func([]map[string]any) []map[string]any
	}{
		{clean, "tool name in a description", origTool, obfuscated, func(ts []map[string]any) []map[string]any {
			ts[0]["description"] = fmt.Sprint(ts[0]["description"], " Like ", origTool, ".")
			return ts
		}},
		{clean, "argument name as a parameter", origArg, obfuscated, func(ts []map[string]any) []map[string]any {
			for _, tl := range ts {
				props, _ := tl["input"].(map[string]any)["properties"].(map[string]any)
				if p, ok := props[newArg]; ok {
					props[origArg] = p
					delete(props, newArg)
					return ts
				}
			}
			t.Fatalf("no tool has argument %s", newArg)
			return ts
		}},
		{clean, "a title", "title", obfuscated, func(ts []map[string]any) []map[string]any {
			ts[0]["title"] = "Größe"
			return ts
		}},
		{clean, "two tools alike", "share their description", honest, func(ts []map[string]any) []map[string]any {
			twin := map[string]any{}
			for k, v := range ts[0] {
				twin[k] = v
			}
			twin["name"] = fmt.Sprint(ts[0]["name"], "_twin")
			return append(ts, twin)
		}},
		{plain, "a hidden constant", "hidden constant", honest, func(ts []map[string]any) []map[string]any {
			for _, tl := range ts {
				meta, _ := tl["meta"].(map[string]any)
				if sql, _ := meta[sqlrest.MetaSQL].(string); sql != "" {
					meta[sqlrest.MetaSQL] = sql + " LIMIT 987654"
					return ts
				}
			}
			t.Fatal("no REST tool has its SQL in meta")
			return ts
		}},
	} {
		errs := c.check(plant(c.src, strings.ReplaceAll(c.name, " ", "_"), c.change))
		if !strings.Contains(strings.Join(errs, "\n"), c.want) {
			t.Errorf("%s: not reported (want %q): %q", c.name, c.want, errs)
		}
	}
}
