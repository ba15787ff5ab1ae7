package review

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/toolenv/toolenv/server/guard"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/probe"
	"github.com/toolenv/toolenv/mapping/structural"
)

// Options configure a Reviewer.
type Options struct {
	// Probe holds the queries, their candidates and the proposed
	// mappings (toolenv map probe writes it).
	Probe *probe.File
	// Journal is the annotations file (JSON lines); it is created when
	// missing and appended to, never rewritten.
	Journal string
	// Annotator is the name annotations carry when the page gives none.
	Annotator string
	// Logger logs annotations at debug level; nil discards.
	Logger *slog.Logger
	// Guard checks every request to the page and its API; nil means
	// loopback names only, and a login: a bearer token or the cookie a
	// one-time login link (Reviewer.LoginLink) sets.
	Guard *guard.Guard
}

// Reviewer holds the review's queries and its journal. It is safe for
// concurrent use.
type Reviewer struct {
	opts    Options
	queries []*Query
	byID    map[string]*Query
	j       *journal
	log     *slog.Logger
}

// Query is one query under review.
type Query struct {
	ID         string      `json:"id"`
	Text       string      `json:"text"`
	Candidates []Candidate `json:"candidates"`
	Proposals  []*Proposal `json:"proposals"`
	Notes      []string    `json:"notes,omitempty"`
	Critique   string      `json:"critique,omitempty"`
	tools      map[string]*structural.Profile
}

// Candidate is a candidate tool as the page shows it.
type Candidate struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Title       string   `json:"title,omitempty"`
	Group       string   `json:"group,omitempty"`
	Description string   `json:"description,omitempty"`
	Params      []Field  `json:"params"`
	Outputs     []string `json:"outputs"`
}

// Field is a documented argument.
type Field struct {
	Path        string `json:"path"`
	Type        string `json:"type,omitempty"`
	Required    bool   `json:"required,omitempty"`
	Description string `json:"description,omitempty"`
}

// Proposal is one proposed mapping.
type Proposal struct {
	ID      string           `json:"id"`
	Mapping *mapping.Mapping `json:"mapping"`
}

// New opens the journal and prepares the queries of opts.Probe. Journal
// lines that do not parse are returned as problems; they are skipped, the
// rest is kept.
func New(opts Options) (*Reviewer, []error, error) {
	if opts.Probe == nil {
		return nil, nil, fmt.Errorf("review: no probe file to review (toolenv map probe --out writes one)")
	}
	if opts.Journal == "" {
		return nil, nil, fmt.Errorf("review: no journal file to keep the annotations in")
	}
	if opts.Annotator == "" {
		opts.Annotator = "anonymous"
	}
	j, problems, err := openJournal(opts.Journal)
	if err != nil {
		return nil, nil, err
	}
	r := &Reviewer{opts: opts, byID: map[string]*Query{}, j: j, log: opts.Logger}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.opts.Guard == nil {
		if r.opts.Guard, err = guard.New(guard.Policy{Login: true, Logger: r.log}); err != nil {
			j.close()
			return nil, nil, err
		}
	}
	for _, res := range opts.Probe.Queries {
		if _, dup := r.byID[res.Query.ID]; dup {
			continue
		}
		q := newQuery(res, opts.Probe)
		r.queries = append(r.queries, q)
		r.byID[q.ID] = q
	}
	return r, problems, nil
}

// Close closes the journal.
func (r *Reviewer) Close() error { return r.j.close() }

func newQuery(res *probe.Result, f *probe.File) *Query {
	q := &Query{ID: res.Query.ID, Text: res.Query.Text, Notes: res.Notes, Critique: res.Critique, tools: map[string]*structural.Profile{}}
	in := map[string]bool{}
	for _, id := range res.Candidates {
		t := f.Tools[id]
		if t == nil {
			continue
		}
		in[id] = true
		p := structural.NewProfile(t, nil)
		q.tools[id] = p
		c := Candidate{ID: id, Name: t.Name, Title: t.Title, Group: t.Group, Description: t.Description, Params: []Field{}, Outputs: []string{}}
		for _, fl := range p.Inputs {
			c.Params = append(c.Params, Field{Path: fl.Path, Type: fl.Type, Required: fl.Required, Description: fl.Description})
		}
		for _, fl := range p.Outputs {
			c.Outputs = append(c.Outputs, fl.Path)
		}
		q.Candidates = append(q.Candidates, c)
	}
	seen := map[string]bool{}
	add := func(m *mapping.Mapping) {
		if !in[m.From] || !in[m.To] {
			return
		}
		id := proposalID(q.ID, m)
		if seen[id] {
			return
		}
		seen[id] = true
		q.Proposals = append(q.Proposals, &Proposal{ID: id, Mapping: m})
	}
	for _, m := range res.Initial {
		add(m)
	}
	for _, m := range res.Reflected {
		add(m)
	}
	for _, m := range f.Structural {
		add(m)
	}
	return q
}

func proposalID(query string, m *mapping.Mapping) string {
	h := sha256.Sum256([]byte(query + "\x00" + m.From + "\x00" + m.To + "\x00" + string(m.Provenance)))
	return "p" + hex.EncodeToString(h[:5])
}

// Queries returns the queries with their review counts.
func (r *Reviewer) Queries() []QuerySummary {
	state := r.state()
	out := make([]QuerySummary, 0, len(r.queries))
	for _, q := range r.queries {
		s := QuerySummary{ID: q.ID, Text: q.Text, Proposals: len(q.Proposals)}
		for _, p := range q.Proposals {
			switch st := state.status(q.ID, p); st {
			case "unreviewed":
			case "conflict":
				s.Reviewed++
				s.Conflicts++
			default:
				s.Reviewed++
			}
		}
		out = append(out, s)
	}
	return out
}

// QuerySummary is a query in the page's list.
type QuerySummary struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	Proposals int    `json:"proposals"`
	Reviewed  int    `json:"reviewed"`
	Conflicts int    `json:"conflicts"`
}

// QueryState is a query with the annotations of its proposals.
type QueryState struct {
	*Query
	Proposals []ProposalState `json:"proposals"`
	// Added are mappings annotators added that were not proposed.
	Added []*Annotation `json:"added"`
}

// ProposalState is a proposal with its review.
type ProposalState struct {
	*Proposal
	// Status is "unreviewed", "accept", "reject", "correct" or
	// "conflict".
	Status string `json:"status"`
	// Annotations are the latest annotation of each annotator.
	Annotations []*Annotation `json:"annotations"`
}

// Query returns a query with the annotations of its proposals, or nil.
func (r *Reviewer) Query(id string) *QueryState {
	q := r.byID[id]
	if q == nil {
		return nil
	}
	state := r.state()
	qs := &QueryState{Query: q, Proposals: []ProposalState{}, Added: []*Annotation{}}
	for _, p := range q.Proposals {
		qs.Proposals = append(qs.Proposals, ProposalState{Proposal: p, Status: state.status(q.ID, p), Annotations: state.latest(q.ID, p.ID)})
	}
	for _, a := range state.added[q.ID] {
		qs.Added = append(qs.Added, a)
	}
	return qs
}

// Annotate checks an annotation against the query's candidates and
// appends it to the journal. A correction must name candidate tools and
// documented fields; accept and reject take the proposal's mapping.
func (r *Reviewer) Annotate(a Annotation) (*Annotation, error) {
	q := r.byID[a.Query]
	if q == nil {
		return nil, fmt.Errorf("no query %q under review", a.Query)
	}
	if strings.TrimSpace(a.Annotator) == "" {
		a.Annotator = r.opts.Annotator
	}
	a.Annotator = strings.TrimSpace(a.Annotator)
	var prop *Proposal
	if a.Proposal != "" {
		for _, p := range q.Proposals {
			if p.ID == a.Proposal {
				prop = p
			}
		}
		if prop == nil {
			return nil, fmt.Errorf("query %s has no proposal %q", q.ID, a.Proposal)
		}
	}
	switch a.Verdict {
	case Accept, Reject:
		if prop == nil {
			return nil, fmt.Errorf("%s needs the proposal it is about", a.Verdict)
		}
		m := prop.Mapping.Clone()
		a.Mapping = m
	case Correct:
		if a.Mapping == nil {
			return nil, fmt.Errorf("a correction needs the corrected mapping")
		}
		if err := q.check(a.Mapping); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("verdict %q: want accept, reject or correct", a.Verdict)
	}
	a.Mapping.Provenance = mapping.Human
	a.Mapping.Query = q.ID
	if a.Mapping.Score == 0 || a.Verdict == Correct {
		a.Mapping.Score = 1
	}
	if a.Note != "" {
		a.Mapping.Reasoning = a.Note
	}
	a.Time = time.Now().UTC()
	a.ID = ""
	if err := r.j.append(&a); err != nil {
		return nil, err
	}
	r.log.Debug("annotation", "query", q.ID, "proposal", a.Proposal, "verdict", a.Verdict, "annotator", a.Annotator)
	return &a, nil
}

// check verifies that a corrected mapping names candidate tools and their
// documented fields, saying which exist when it does not.
func (q *Query) check(m *mapping.Mapping) error {
	pf, pt := q.tools[m.From], q.tools[m.To]
	if pf == nil || pt == nil {
		ids := make([]string, 0, len(q.tools))
		for id := range q.tools {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		return fmt.Errorf("%s → %s: both tools must be candidates of query %s (%s)", m.From, m.To, q.ID, strings.Join(ids, ", "))
	}
	m.Provenance = mapping.Human
	if m.Score == 0 {
		m.Score = 1
	}
	if err := m.Validate(); err != nil {
		return err
	}
	paths := func(fs []*structural.Field) map[string]bool {
		out := map[string]bool{}
		for _, f := range fs {
			out[f.Path] = true
		}
		return out
	}
	for _, side := range []struct {
		name     string
		pairs    []mapping.FieldPair
		from, to map[string]bool
	}{{"argument", m.Inputs, paths(pf.Inputs), paths(pt.Inputs)}, {"response field", m.Outputs, paths(pf.Outputs), paths(pt.Outputs)}} {
		for _, p := range side.pairs {
			if !side.from[p.From] {
				return fmt.Errorf("%s has no %s %q (it has: %s)", m.From, side.name, p.From, keys(side.from))
			}
			if !side.to[p.To] {
				return fmt.Errorf("%s has no %s %q (it has: %s)", m.To, side.name, p.To, keys(side.to))
			}
		}
	}
	return nil
}

func keys(m map[string]bool) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// reviewState is the journal folded: the latest annotation of each
// annotator on each proposal, and mappings added by hand.
type reviewState struct {
	byProp map[string]map[string]*Annotation // query+proposal → annotator → latest
	byPair map[string]map[string]*Annotation // query+pair key → annotator → latest
	added  map[string][]*Annotation          // query → annotations without a proposal (latest per annotator and pair)
}

func (r *Reviewer) state() *reviewState {
	s := &reviewState{byProp: map[string]map[string]*Annotation{}, byPair: map[string]map[string]*Annotation{}, added: map[string][]*Annotation{}}
	addedLatest := map[string]*Annotation{}
	for _, a := range r.j.annotations() {
		if a.Proposal != "" {
			k := a.Query + "\x00" + a.Proposal
			if s.byProp[k] == nil {
				s.byProp[k] = map[string]*Annotation{}
			}
			s.byProp[k][a.Annotator] = a
		} else {
			addedLatest[a.Query+"\x00"+a.Annotator+"\x00"+a.Mapping.Key()] = a
		}
		pk := a.Query + "\x00" + a.Mapping.Key()
		if s.byPair[pk] == nil {
			s.byPair[pk] = map[string]*Annotation{}
		}
		s.byPair[pk][a.Annotator] = a
	}
	for _, a := range addedLatest {
		s.added[a.Query] = append(s.added[a.Query], a)
	}
	for _, list := range s.added {
		sort.Slice(list, func(i, j int) bool { return list[i].Time.Before(list[j].Time) })
	}
	return s
}

// latest returns the latest annotation of each annotator on a proposal,
// by annotator.
func (s *reviewState) latest(query, prop string) []*Annotation {
	m := s.byProp[query+"\x00"+prop]
	out := make([]*Annotation, 0, len(m))
	for _, a := range m {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Annotator < out[j].Annotator })
	return out
}

// status is a proposal's verdict: unreviewed, the annotators' common
// verdict, or conflict when annotators disagree on its tool pair.
func (s *reviewState) status(query string, p *Proposal) string {
	as := s.latest(query, p.ID)
	if len(as) == 0 {
		return "unreviewed"
	}
	if conflicting(s.byPair[query+"\x00"+p.Mapping.Key()]) {
		return "conflict"
	}
	return as[0].Verdict
}

// conflicting reports whether annotators disagree: one rejects what
// another accepts, or their mappings of the pair differ.
func conflicting(byAnnotator map[string]*Annotation) bool {
	var first *Annotation
	for _, a := range byAnnotator {
		if first == nil {
			first = a
			continue
		}
		if (a.Verdict == Reject) != (first.Verdict == Reject) {
			return true
		}
		if a.Verdict != Reject && signature(a.Mapping) != signature(first.Mapping) {
			return true
		}
	}
	return false
}

// signature is a mapping's content, oriented by its pair key, for
// comparing two annotators' mappings.
func signature(m *mapping.Mapping) string {
	o := m
	if m.To < m.From {
		o = m.Reverse()
	}
	in := append([]mapping.FieldPair(nil), o.Inputs...)
	out := append([]mapping.FieldPair(nil), o.Outputs...)
	mapping.SortPairs(in)
	mapping.SortPairs(out)
	var b strings.Builder
	b.WriteString(o.From + ">" + o.To)
	for _, p := range in {
		b.WriteString("|i:" + p.From + "=" + p.To)
	}
	for _, p := range out {
		b.WriteString("|o:" + p.From + "=" + p.To)
	}
	for _, k := range slices.Sorted(maps.Keys(o.Fixed)) {
		c, _ := toolenv.Canonical(o.Fixed[k])
		b.WriteString("|f:" + k + "=" + string(c))
	}
	for _, k := range slices.Sorted(maps.Keys(o.When)) {
		c, _ := toolenv.Canonical(o.When[k])
		b.WriteString("|w:" + k + "=" + string(c))
	}
	return b.String()
}
