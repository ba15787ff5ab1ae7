package review

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/probe"
)

// fixture is a probe file over the test collection: two queries with
// model, reflected and structural proposals.
func fixture(t testing.TB) *probe.File {
	t.Helper()
	c, err := toolenv.ReadCollection("../testdata/world")
	if err != nil {
		t.Fatal(err)
	}
	books := &mapping.Mapping{From: "world/search_books", To: "world/find_titles", Score: 0.9, Provenance: mapping.LLM,
		Inputs: []mapping.FieldPair{{From: "q", To: "searchTerm"}, {From: "limit", To: "searchTerm"}}, Reasoning: "both search the catalogue"}
	booksReflected := &mapping.Mapping{From: "world/search_books", To: "world/find_titles", Score: 0.95, Provenance: mapping.Reflection,
		Inputs: []mapping.FieldPair{{From: "q", To: "searchTerm"}, {From: "limit", To: "maxResults"}}, Reasoning: "limit is maxResults"}
	wrong := &mapping.Mapping{From: "world/search_books", To: "world/convert_currency", Score: 0.3, Provenance: mapping.LLM, Reasoning: "a guess"}
	money := &mapping.Mapping{From: "world/convert_currency", To: "world/exchange_money", Score: 0.8, Provenance: mapping.LLM,
		Inputs: []mapping.FieldPair{{From: "from", To: "source_currency"}, {From: "to", To: "target_currency"}, {From: "amount", To: "qty"}}, Reasoning: "both convert money"}
	results := []*probe.Result{
		{Query: probe.Query{ID: "q1", Text: "find the book Dune and its ISBN"}, Candidates: []string{"world/search_books", "world/find_titles", "world/convert_currency"},
			Initial: []*mapping.Mapping{books, wrong}, Reflected: []*mapping.Mapping{booksReflected}, Critique: "dropped the currency guess"},
		{Query: probe.Query{ID: "q2", Text: "convert 10 euros to dollars"}, Candidates: []string{"world/convert_currency", "world/exchange_money"},
			Initial: []*mapping.Mapping{money}, Reflected: []*mapping.Mapping{money}},
	}
	byID := func(id string) *toolenv.Tool {
		_, name, _ := toolenv.SplitToolID(id)
		return c.Tool(name)
	}
	return probe.NewFile("test-model", results, byID, nil)
}

func open(t *testing.T, journal string) *Reviewer {
	t.Helper()
	r, problems, err := New(Options{Probe: fixture(t), Journal: journal, Annotator: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatalf("journal problems: %v", problems)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestProposalsPerQuery(t *testing.T) {
	r := open(t, filepath.Join(t.TempDir(), "j.jsonl"))
	q := r.Query("q1")
	if q == nil || len(q.Candidates) != 3 || len(q.Proposals) != 3 {
		t.Fatalf("q1 = %+v", q)
	}
	provs := []string{}
	for _, p := range q.Proposals {
		provs = append(provs, string(p.Mapping.Provenance))
		if p.Status != "unreviewed" {
			t.Fatalf("status = %s", p.Status)
		}
	}
	if strings.Join(provs, ",") != "llm,llm,reflection" {
		t.Fatalf("provenances = %v", provs)
	}
	if r.Query("nope") != nil {
		t.Fatal("unknown query found")
	}
}

func TestAnnotationsSurviveRestartsAndConflictsAreKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	r := open(t, path)
	q := r.Query("q1")
	llm, wrong, refl := q.Proposals[0].ID, q.Proposals[1].ID, q.Proposals[2].ID
	mustAnnotate := func(r *Reviewer, a Annotation) {
		t.Helper()
		if _, err := r.Annotate(a); err != nil {
			t.Fatal(err)
		}
	}
	mustAnnotate(r, Annotation{Query: "q1", Proposal: refl, Verdict: Accept, Annotator: "alice"})
	mustAnnotate(r, Annotation{Query: "q1", Proposal: wrong, Verdict: Reject, Annotator: "alice"})
	// alice first rejects, then corrects the llm proposal: the latest counts.
	mustAnnotate(r, Annotation{Query: "q1", Proposal: llm, Verdict: Reject, Annotator: "alice"})
	mustAnnotate(r, Annotation{Query: "q1", Proposal: llm, Verdict: Correct, Annotator: "alice", Note: "limit is maxResults",
		Mapping: &mapping.Mapping{From: "world/search_books", To: "world/find_titles", Inputs: []mapping.FieldPair{{From: "q", To: "searchTerm"}, {From: "limit", To: "maxResults"}}}})
	// bob disagrees with the currency rejection.
	mustAnnotate(r, Annotation{Query: "q1", Proposal: wrong, Verdict: Accept, Annotator: "bob"})
	r.Close()

	// Reopened, everything is there.
	r2 := open(t, path)
	q = r2.Query("q1")
	status := map[string]string{}
	for _, p := range q.Proposals {
		status[p.ID] = p.Status
	}
	if status[refl] != "accept" || status[llm] != "correct" || status[wrong] != "conflict" {
		t.Fatalf("statuses = %v", status)
	}
	e := r2.Export()
	if e.Annotations != 5 || len(e.Mappings) != 1 || len(e.Conflicts) != 1 || len(e.Rejected) != 0 {
		t.Fatalf("export: %d annotations, %d mappings, %d conflicts, %d rejected", e.Annotations, len(e.Mappings), len(e.Conflicts), len(e.Rejected))
	}
	m := e.Mappings[0]
	if m.Provenance != mapping.Human || m.Query != "q1" || len(m.Inputs) != 2 || m.Inputs[1].To != "maxResults" {
		t.Fatalf("exported mapping = %+v", m)
	}
	if c := e.Conflicts[0]; len(c.Annotations) != 2 || c.Annotations[0].Annotator != "alice" || c.Annotations[1].Annotator != "bob" {
		t.Fatalf("conflict = %+v", c)
	}
	if s := e.Set(); len(s.Mappings) != 1 || s.Validate() != nil {
		t.Fatalf("set = %+v", s)
	}
	if got := e.String(); got != "5 annotations: 1 agreed mappings, 0 rejected, 1 conflicts" {
		t.Errorf("export line %q", got)
	}
	dir := t.TempDir()
	if err := e.Write(filepath.Join(dir, "export.json"), filepath.Join(dir, "set.json")); err != nil {
		t.Fatal(err)
	}
	if set, err := mapping.ReadSet(filepath.Join(dir, "set.json")); err != nil || len(set.Mappings) != 1 {
		t.Fatalf("written set: %v %v", set, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "export.json")); err != nil {
		t.Fatal(err)
	}
	if err := e.Write("", ""); err != nil {
		t.Errorf("writing nothing: %v", err)
	}
	if qs := r2.Queries(); qs[0].Reviewed != 3 || qs[0].Conflicts != 1 || qs[1].Reviewed != 0 {
		t.Fatalf("summaries = %+v", qs)
	}
}

func TestBadAnnotations(t *testing.T) {
	r := open(t, filepath.Join(t.TempDir(), "j.jsonl"))
	p := r.Query("q1").Proposals[0].ID
	tests := []struct {
		name string
		a    Annotation
		want string
	}{
		{"unknown query", Annotation{Query: "zz", Proposal: p, Verdict: Accept}, "no query"},
		{"unknown proposal", Annotation{Query: "q1", Proposal: "p0", Verdict: Accept}, "no proposal"},
		{"unknown verdict", Annotation{Query: "q1", Proposal: p, Verdict: "maybe"}, "want accept, reject or correct"},
		{"correct without mapping", Annotation{Query: "q1", Proposal: p, Verdict: Correct}, "needs the corrected mapping"},
		{"tool not a candidate", Annotation{Query: "q1", Verdict: Correct, Mapping: &mapping.Mapping{From: "world/search_books", To: "world/sort_data"}}, "must be candidates"},
		{"field not documented", Annotation{Query: "q1", Verdict: Correct, Mapping: &mapping.Mapping{From: "world/search_books", To: "world/find_titles", Inputs: []mapping.FieldPair{{From: "query", To: "searchTerm"}}}}, `no argument "query" (it has: limit, q)`},
		{"field paired twice", Annotation{Query: "q1", Verdict: Correct, Mapping: &mapping.Mapping{From: "world/search_books", To: "world/find_titles", Inputs: []mapping.FieldPair{{From: "q", To: "searchTerm"}, {From: "limit", To: "searchTerm"}}}}, "target of two fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := r.Annotate(tt.a); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if n := len(r.j.annotations()); n != 0 {
		t.Fatalf("%d bad annotations were written", n)
	}
}

func TestTornJournalLineIsSkippedNotFatal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	r := open(t, path)
	p := r.Query("q2").Proposals[0].ID
	if _, err := r.Annotate(Annotation{Query: "q2", Proposal: p, Verdict: Accept, Annotator: "alice"}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"torn","query":"q2","verd`) // a crash mid-write
	f.Close()
	r2, problems, err := New(Options{Probe: fixture(t), Journal: path})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if len(problems) != 1 || r2.Query("q2").Proposals[0].Status != "accept" {
		t.Fatalf("problems %v, status %s", problems, r2.Query("q2").Proposals[0].Status)
	}
	// New annotations after the torn line are read back too.
	if _, err := r2.Annotate(Annotation{Query: "q2", Proposal: p, Verdict: Reject, Annotator: "bob"}); err != nil {
		t.Fatal(err)
	}
	r2.Close()
	r3, problems, err := New(Options{Probe: fixture(t), Journal: path})
	if err != nil {
		t.Fatal(err)
	}
	defer r3.Close()
	if len(problems) != 1 || r3.Query("q2").Proposals[0].Status != "conflict" {
		t.Fatalf("after reopening: problems %v, status %s", problems, r3.Query("q2").Proposals[0].Status)
	}
}

func TestHTTP(t *testing.T) {
	r := open(t, filepath.Join(t.TempDir(), "j.jsonl"))
	srv := httptest.NewServer(r.Handler())
	defer srv.Close()
	c := login(t, r, srv.URL)
	get := func(path string) (*http.Response, []byte) {
		t.Helper()
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp, b.Bytes()
	}
	resp, body := get("/")
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("mapping review")) || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Fatalf("page: %d %s", resp.StatusCode, resp.Header)
	}
	for _, p := range []string{"/static/app.js", "/static/app.css"} {
		if resp, _ := get(p); resp.StatusCode != 200 {
			t.Fatalf("%s: %d", p, resp.StatusCode)
		}
	}
	// The page references nothing outside the server.
	if bytes.Contains(body, []byte("http://")) || bytes.Contains(body, []byte("https://")) {
		t.Fatal("the page loads something from elsewhere")
	}
	resp, body = get("/api/query?id=q1")
	var q QueryState
	if err := json.Unmarshal(body, &q); err != nil || resp.StatusCode != 200 || len(q.Proposals) != 3 {
		t.Fatalf("query: %d %s", resp.StatusCode, body)
	}
	post := func(v any) (*http.Response, []byte) {
		t.Helper()
		b, _ := json.Marshal(v)
		resp, err := c.Post(srv.URL+"/api/annotations", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out bytes.Buffer
		out.ReadFrom(resp.Body)
		return resp, out.Bytes()
	}
	if resp, body := post(map[string]any{"query": "q1", "proposal": q.Proposals[2].ID, "verdict": "accept", "annotator": "alice"}); resp.StatusCode != 201 {
		t.Fatalf("post: %d %s", resp.StatusCode, body)
	}
	if resp, body := post(map[string]any{"query": "q1", "proposal": "nope", "verdict": "accept"}); resp.StatusCode != 400 || !bytes.Contains(body, []byte("no proposal")) {
		t.Fatalf("bad post: %d %s", resp.StatusCode, body)
	}
	resp, err := c.Post(srv.URL+"/api/annotations", "application/json", strings.NewReader("{not json"))
	if err != nil || resp.StatusCode != 400 {
		t.Fatalf("garbage post: %v %v", resp, err)
	}
	if resp, _ := get("/api/query?id=zz"); resp.StatusCode != 404 {
		t.Fatalf("unknown query: %d", resp.StatusCode)
	}
	_, body = get("/api/export")
	var e Export
	if err := json.Unmarshal(body, &e); err != nil || len(e.Mappings) != 1 {
		t.Fatalf("export: %s", body)
	}
	_, body = get("/api/export?set=1")
	var s mapping.Set
	if err := json.Unmarshal(body, &s); err != nil || len(s.Mappings) != 1 || s.Version != mapping.SetVersion {
		t.Fatalf("export set: %s", body)
	}
}
