package structural

import (
	"context"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/terms"
)

// Options configure a Matcher. The zero value uses the defaults.
type Options struct {
	// MinScore is the lowest tool-pair score proposed; default 0.55.
	MinScore float64
	// MinField is the lowest field-pair score kept in an alignment;
	// default 0.35.
	MinField float64
	// Candidates is how many most similar tools (by TF-IDF over names,
	// descriptions and fields) each tool is compared with in full;
	// default 25.
	Candidates int
	// Neighbours, when set, returns a tool's neighbours in the operation
	// graph (tools of the same API sharing fields); a pair whose
	// neighbours also match is strengthened (package graph builds it).
	Neighbours func(toolID string) []string
	// Progress, when set, is told how many tools have been compared.
	Progress func(done, total int)
}

func (o *Options) defaults() {
	if o.MinScore <= 0 {
		o.MinScore = 0.55
	}
	if o.MinField <= 0 {
		o.MinField = 0.35
	}
	if o.Candidates <= 0 {
		o.Candidates = 25
	}
}

// Matcher compares the tools it was built over.
type Matcher struct {
	opts     Options
	profiles []*Profile
	byID     map[string]*Profile
	tools    *corpus
	fields   *corpus
	names    *corpus
	fieldN   int // tools counted for field IDF

	scores sync.Pool // of *scoreBuf, candidates' accumulators
}

// scoreBuf accumulates the scores of candidates by profile index: a
// dense list (a map of thousands of entries, grown for every profile, cost
// more than the scoring), with the indexes touched so that only those are
// read and cleared.
type scoreBuf struct {
	score   []float64
	touched []bool
	docs    []int
}

// New profiles tools (with the evidence of each, by tool ID; ev may be
// nil) and prepares their TF-IDF vectors.
func New(tools []*toolenv.Tool, ev map[string]*Evidence, opts Options) *Matcher {
	opts.defaults()
	m := &Matcher{opts: opts, byID: map[string]*Profile{}, tools: newCorpus(), fields: newCorpus(), names: newCorpus()}
	for _, t := range tools {
		p := NewProfile(t, ev[t.ID])
		m.profiles = append(m.profiles, p)
		m.byID[t.ID] = p
	}
	markOpaque(m.profiles)
	for _, p := range m.profiles {
		p.descWords = proseWords(p.descText)
		if raw := prose(p.Tool); raw != p.descText {
			p.asWritten = &prosePart{text: raw, words: proseWords(raw)}
		}
	}
	docs := make([][]string, len(m.profiles))
	for i, p := range m.profiles {
		docs[i] = toolDocument(p)
		m.tools.add(docs[i])
		if !p.opaque {
			m.names.add(p.name)
		}
		for _, f := range append(append([]*Field(nil), p.Inputs...), p.Outputs...) {
			m.fields.add(terms.Text(f.Description))
		}
	}
	fieldDF := newCorpus()
	defer func() { m.fieldN = fieldDF.n }()
	for _, p := range m.profiles {
		var keys []string
		for _, f := range append(append([]*Field(nil), p.Inputs...), p.Outputs...) {
			keys = append(keys, f.key())
		}
		fieldDF.add(keys)
	}
	for i, p := range m.profiles {
		for _, f := range append(append([]*Field(nil), p.Inputs...), p.Outputs...) {
			f.idf = fieldDF.idf(f.key())
		}
		p.words = m.tools.vector(docs[i])
		p.desc = m.tools.vector(p.descWords)
		if p.asWritten != nil {
			p.asWritten.vec = m.tools.vector(p.asWritten.words)
		}
		p.domain = m.tools.vector(terms.Text(p.Tool.Category + " " + p.Tool.GroupDescription))
		for _, f := range append(append([]*Field(nil), p.Inputs...), p.Outputs...) {
			f.desc = m.fields.vector(terms.Text(f.Description))
		}
		p.nameText, p.namePairs = strings.Join(p.name, " "), wordMap(bigrams(p.name))
		p.stripped = (&prosePart{text: p.descText, words: p.descWords, vec: p.desc}).prepare()
		if p.asWritten != nil {
			p.asWritten.prepare()
		}
	}
	return m
}

// Profiles returns the profiles, in the order of the tools given to New.
func (m *Matcher) Profiles() []*Profile { return m.profiles }

// SetNeighbours sets Options.Neighbours after New, for an operation graph
// built from the matcher's own profiles.
func (m *Matcher) SetNeighbours(fn func(toolID string) []string) { m.opts.Neighbours = fn }

// Profile returns the profile of a tool, or nil.
func (m *Matcher) Profile(id string) *Profile { return m.byID[id] }

// toolDocument is the words a tool is retrieved by: its name twice, its
// description, and its field names (opaque names left out: a serial
// number retrieves nothing).
func toolDocument(p *Profile) []string {
	var words []string
	if !p.opaque {
		words = append(append(words, p.name...), p.name...)
	}
	words = append(words, p.descWords...)
	for _, f := range p.fields() {
		if !f.opaque {
			words = append(words, f.last...)
		}
	}
	return words
}

// Weights of the signals of a tool comparison (rescaled over the signals
// both tools have).
const (
	wToolName = 0.20
	wToolDesc = 0.35
	wToolIn   = 0.20
	wToolOut  = 0.25
	// wToolDomain weighs the similarity of the two APIs' descriptions and
	// categories: alternatives serve one domain.
	wToolDomain = 0.10
)

// Compare scores tool b as a stand-in for tool a and aligns their fields.
// It returns nil when either tool is unknown to the matcher.
func (m *Matcher) Compare(a, b string) *mapping.Mapping {
	pa, pb := m.byID[a], m.byID[b]
	if pa == nil || pb == nil || a == b {
		return nil
	}
	mp := m.compare(pa, pb)
	mp.Reasoning = reasoning(mp)
	return mp
}

// compare scores pb as a stand-in for pa, without the Reasoning, which
// callers write for the mappings they keep (most compared are not).
func (m *Matcher) compare(pa, pb *Profile) *mapping.Mapping {
	mp := &mapping.Mapping{From: pa.Tool.ID, To: pb.Tool.ID, Provenance: mapping.Structural, Signals: map[string]float64{}}
	nameA, nameB := pa.name, pb.name
	ina, inb := pa.Inputs, pb.Inputs
	// A specialised tool (SEL's select_data_equal_to) stands for a
	// general one with an argument fixed (filter_data condition=equal_to).
	if sp := specialise(pa, pb); sp != nil {
		mp.When = sp.values
		nameB = sp.rest
		ina = without(ina, sp.values)
	} else if sp := specialise(pb, pa); sp != nil {
		mp.Fixed = sp.values
		nameA = sp.rest
		inb = without(inb, sp.values)
	}
	// Name words are weighed by their rarity: "random_bank_by_id" and
	// "random_crypto_by_id" share their common words only.
	name := m.weightedJaccard(nameA, nameB)
	textA, pairsA := nameOf(pa, nameA)
	textB, pairsB := nameOf(pb, nameB)
	if textA == textB && len(nameA) > 0 {
		name = 1
	} else if len(nameA) > 1 && len(nameB) > 1 {
		// Word order matters: get_race_by_superhero_name is not
		// get_superhero_name_by_race.
		name *= 0.6 + 0.4*dice(pairsA(), pairsB())
	}
	// A negation in one name only ("select_data_is_not_null") reverses
	// the meaning of the words both share.
	if negated(nameA) != negated(nameB) {
		name *= 0.5
	}
	// A generated name (FUNC_12) is no evidence either way: the name
	// signal is left out, and the evidence there is counted in full.
	opaque := pa.opaque || pb.opaque
	var sum, weight, full float64
	if opaque {
		name = 0
		mp.Signals["opaque_name"] = 1
	} else {
		sum, weight, full = wToolName*name, wToolName, wToolName
		mp.Signals["name"] = round3(name)
	}
	full += wToolDesc + wToolIn + wToolOut
	if !siblings(pa.Tool, pb.Tool) && pa.domain != nil && pb.domain != nil {
		d := cosine(pa.domain, pb.domain)
		sum += wToolDomain * d
		weight += wToolDomain
		mp.Signals["domain"] = round3(d)
	}
	if pa.desc != nil && pb.desc != nil {
		d := textSimilarity(pa, pb)
		// A specialised tool describes part of what the general one does:
		// what counts is how much of its description the other covers.
		switch {
		case len(mp.When) > 0:
			d = max(d, covered(pb.desc, pa.desc), covered(written(pb).vec, written(pa).vec))
		case len(mp.Fixed) > 0:
			d = max(d, covered(pa.desc, pb.desc), covered(written(pa).vec, written(pb).vec))
		}
		sum += wToolDesc * d
		weight += wToolDesc
		mp.Signals["description"] = round3(d)
	}
	// Fields most tools have (a response envelope, a session label) say
	// little: each side's signal weighs as much as its fields inform.
	inPairs, inQ := alignFields(ina, inb, m.opts.MinField, 0.25)
	if len(ina) > 0 || len(inb) > 0 {
		w := wToolIn * m.informative(ina, inb)
		sum += w * inQ
		weight += w
		mp.Signals["inputs"] = round3(inQ)
	}
	outPairs, outQ := alignFields(pa.Outputs, pb.Outputs, m.opts.MinField, 0.5)
	if len(pa.Outputs) > 0 && len(pb.Outputs) > 0 {
		w := wToolOut * m.informative(pa.Outputs, pb.Outputs)
		sum += w * outQ
		weight += w
		mp.Signals["outputs"] = round3(outQ)
	}
	// Two tools whose arguments do not correspond cannot stand in for
	// each other, whatever their names say: a call could not be
	// translated.
	if len(ina) > 0 && len(inb) > 0 && inQ < 0.25 {
		sum -= (0.25 - inQ) * weight
	}
	// Evidence from one signal is weaker than agreement of several: the
	// mean is scaled by how much of the evidence there was.
	score := 0.0
	if weight > 0 {
		score = sum / weight * (0.5 + 0.5*min(1, weight/full))
	}
	// Operations of one API share parameters and response envelopes by
	// construction, so for siblings only their names tell them apart.
	// Equivalent siblings are versions of one operation ("user_tweets",
	// "v2_user_tweets"), named alike.
	if siblings(pa.Tool, pb.Tool) {
		score *= min(1, name/0.8)
		mp.Signals["siblings"] = 1
	}
	// A stand-in must take the caller's information: with arguments on
	// both sides and none of them corresponding, no call could be
	// translated.
	if len(ina) > 0 && len(inb) > 0 && len(inPairs) == 0 {
		score = min(score, 0.45)
	}
	mp.Score = round3(score)
	for _, p := range inPairs {
		mp.Inputs = append(mp.Inputs, mapping.FieldPair{From: ina[p.a].Path, To: inb[p.b].Path, Score: round3(p.score), Reason: p.reason})
	}
	for _, p := range outPairs {
		mp.Outputs = append(mp.Outputs, mapping.FieldPair{From: pa.Outputs[p.a].Path, To: pb.Outputs[p.b].Path, Score: round3(p.score), Reason: p.reason})
	}
	return mp
}

// nameOf returns name (p's name, or what a specialisation left of it)
// joined with spaces, and a function giving the set of its bigrams: made
// once for p's own name (New), now for another.
func nameOf(p *Profile, name []string) (string, func() map[string]bool) {
	if p.namePairs != nil && len(name) == len(p.name) && (len(name) == 0 || &name[0] == &p.name[0]) {
		return p.nameText, func() map[string]bool { return p.namePairs }
	}
	return strings.Join(name, " "), func() map[string]bool { return wordMap(bigrams(name)) }
}

// textSimilarity is the similarity of two tools' prose: 1 for the same
// text, else the TF-IDF cosine of their words, lowered when their words
// come in another order. Word order decides only between nearly the same
// words: "count, name and id" is not "name, id and count" (the columns
// of the answer come in another order), and a description written in
// the same order is better evidence than a permutation of it.
//
// The prose is read twice — without the mentions of the tools' own
// arguments (a renamed argument is the same reference spelled
// otherwise) and as written (two tools naming their arguments alike
// share those words) — and the better reading counts.
func textSimilarity(pa, pb *Profile) float64 {
	return max(proseSimilarity(stripped(pa), stripped(pb)), proseSimilarity(written(pa), written(pb)))
}

// stripped is a profile's prose without the mentions of its arguments.
func stripped(p *Profile) *prosePart {
	if p.stripped != nil {
		return p.stripped
	}
	return &prosePart{text: p.descText, words: p.descWords, vec: p.desc}
}

// written is a profile's prose as written.
func written(p *Profile) *prosePart {
	if p.asWritten != nil {
		return p.asWritten
	}
	return stripped(p)
}

func proseSimilarity(a, b *prosePart) float64 {
	if a.vec == nil || b.vec == nil {
		return 0
	}
	a, b = a.prepare(), b.prepare()
	if a.trimmed == b.trimmed {
		return 1
	}
	c := cosine(a.vec, b.vec)
	order := dice(a.pairs, b.pairs)
	c *= 1 - 0.1*math.Pow(c, 4)*(1-order)
	// A negation in one text only reverses what both say: "is null" is
	// not "is not null" (prose drops "not" as a stopword).
	if a.neg != b.neg {
		c *= 0.9
	}
	return c
}

// proseWords returns the normalised words of prose, with the operators
// of arithmetic and comparison that stand alone between spaces as words
// of their own ("left + right" is not "left * right"; prose drops
// symbols).
func proseWords(text string) []string {
	words := terms.Text(text)
	for _, f := range strings.Fields(text) {
		if op, ok := operators[f]; ok {
			words = append(words, op)
		}
	}
	return words
}

// operators name the symbols proseWords keeps.
var operators = map[string]string{
	"+": "op_plus", "-": "op_minus", "*": "op_times", "×": "op_times", "/": "op_divide", "÷": "op_divide", "%": "op_modulo",
	"<": "op_lt", "<=": "op_le", "≤": "op_le", ">": "op_gt", ">=": "op_ge", "≥": "op_ge", "=": "op_eq", "==": "op_eq",
	"!=": "op_ne", "<>": "op_ne", "≠": "op_ne",
}

// negations counts the negation words of a text.
func negations(text string) int {
	n := 0
	for w := range terms.Words(text) {
		switch w {
		case "not", "no", "non", "never", "without", "except", "excluding", "nor":
			n++
		}
	}
	return n
}

// siblings reports whether two tools are operations of one API: one
// collection and one ToolBench tool or OpenAPI tag (group); a collection
// without groups is one API.
func siblings(a, b *toolenv.Tool) bool {
	return a.Collection == b.Collection && a.Group == b.Group
}

// without returns fs without the fields named in drop.
func without(fs []*Field, drop map[string]any) []*Field {
	out := make([]*Field, 0, len(fs))
	for _, f := range fs {
		if _, gone := drop[f.Path]; !gone {
			out = append(out, f)
		}
	}
	return out
}

// informative is how much the fields of two tools tell apart tools, in
// [0.05, 1]: the mean of their IDFs over the largest IDF possible, doubled
// (a field in a tenth of the tools counts nearly fully; one in all of
// them, not at all).
func (m *Matcher) informative(as, bs []*Field) float64 {
	n := len(as) + len(bs)
	if n == 0 || m.fieldN < 2 {
		return 1
	}
	maxIDF := math.Log(float64(m.fieldN + 1))
	var s float64
	for _, f := range append(append([]*Field(nil), as...), bs...) {
		s += (f.weight() - 1) / maxIDF
	}
	return max(0.05, min(1, 2*s/float64(n)))
}

// negated reports whether a name holds a negation word.
func negated(words []string) bool {
	for _, w := range words {
		switch w {
		case "not", "no", "non", "without", "exclude":
			return true
		}
	}
	return false
}

// bigrams returns the pairs of consecutive words.
func bigrams(ws []string) []string {
	out := make([]string, 0, len(ws))
	for i := 1; i < len(ws); i++ {
		out = append(out, ws[i-1]+" "+ws[i])
	}
	return out
}

// covered is the share of the TF-IDF mass of vector part whose words are
// in vector whole.
func covered(part, whole tfidf) float64 {
	var s float64
	for i, j := 0, 0; i < len(part) && j < len(whole); {
		switch {
		case part[i].word < whole[j].word:
			i++
		case part[i].word > whole[j].word:
			j++
		default:
			if whole[j].weight > 0 {
				s += part[i].weight * part[i].weight
			}
			i++
			j++
		}
	}
	return s
}

// weightedJaccard is the Jaccard similarity of two word sets with each
// word weighed by its IDF among tool names (summed in sorted order: the
// same last digits every run).
func (m *Matcher) weightedJaccard(a, b []string) float64 {
	sa, sb := sortedSet(a), sortedSet(b)
	var inter, union float64
	for i, j := 0, 0; i < len(sa) || j < len(sb); {
		switch {
		case j == len(sb) || (i < len(sa) && sa[i] < sb[j]):
			union += m.names.idf(sa[i])
			i++
		case i == len(sa) || sb[j] < sa[i]:
			union += m.names.idf(sb[j])
			j++
		default:
			x := m.names.idf(sa[i])
			union += x
			inter += x
			i++
			j++
		}
	}
	if union == 0 {
		return 0
	}
	return inter / union
}

// sortedSet returns the distinct words of ws, sorted.
func sortedSet(ws []string) []string {
	out := slices.Clone(ws)
	slices.Sort(out)
	return slices.Compact(out)
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// reasoning writes the evidence of a structural mapping in words.
func reasoning(m *mapping.Mapping) string {
	var parts []string
	keys := make([]string, 0, len(m.Signals))
	for k := range m.Signals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, m.Signals[k]))
	}
	s := "structural: " + strings.Join(parts, ", ")
	if len(m.Inputs) > 0 {
		s += fmt.Sprintf("; %d argument(s) aligned", len(m.Inputs))
	}
	if len(m.Outputs) > 0 {
		s += fmt.Sprintf("; %d response field(s) aligned", len(m.Outputs))
	}
	for _, k := range slices.Sorted(maps.Keys(m.When)) {
		s += fmt.Sprintf("; holds when %s = %v", k, m.When[k])
	}
	for _, k := range slices.Sorted(maps.Keys(m.Fixed)) {
		s += fmt.Sprintf("; with %s = %v", k, m.Fixed[k])
	}
	return s
}

// candidates returns, for profile i, the indexes of the k most similar
// profiles among allowed by the TF-IDF cosine of the vectors vec gives
// (through the inverted index inv of those vectors).
func (m *Matcher) candidates(i int, allowed func(j int) bool, inv map[string][]posting, vec func(*Profile) tfidf, k int) []int {
	// Words in more than a third of the tools say little and cost most:
	// they are used only when the rarer words found fewer than k tools
	// (a tool described in common words only still gets candidates).
	limit := m.tools.n/3 + 2
	buf, _ := m.scores.Get().(*scoreBuf)
	if buf == nil || len(buf.score) != len(m.profiles) {
		buf = &scoreBuf{score: make([]float64, len(m.profiles)), touched: make([]bool, len(m.profiles))}
	}
	defer func() {
		for _, j := range buf.docs {
			buf.score[j], buf.touched[j] = 0, false
		}
		buf.docs = buf.docs[:0]
		m.scores.Put(buf)
	}()
	for _, common := range []bool{false, true} {
		if common && len(buf.docs) >= k {
			break
		}
		for _, x := range vec(m.profiles[i]) {
			if (m.tools.df[x.word] > limit) != common {
				continue
			}
			for _, p := range inv[x.word] {
				if p.doc != i && allowed(p.doc) {
					if !buf.touched[p.doc] {
						buf.touched[p.doc] = true
						buf.docs = append(buf.docs, p.doc)
					}
					buf.score[p.doc] += x.weight * p.weight
				}
			}
		}
	}
	return bestK(buf.docs, buf.score, k)
}

// bestK returns the k of docs with the highest score, best first, a tie
// going to the lower index: the first k of docs sorted so (a strict
// order), found by insertion, as most docs are not among them and
// sorting every one cost more than scoring them.
func bestK(docs []int, score []float64, k int) []int {
	type sc struct {
		j int
		s float64
	}
	better := func(x, y sc) bool { return x.s > y.s || (x.s == y.s && x.j < y.j) }
	list := make([]sc, 0, max(min(k, len(docs)), 0)+1)
	for _, j := range docs {
		x := sc{j, score[j]}
		if k <= 0 || (len(list) == k && !better(x, list[k-1])) {
			continue
		}
		at := len(list)
		for at > 0 && better(x, list[at-1]) {
			at--
		}
		list = slices.Insert(list, at, x)
		if len(list) > k {
			list = list[:k]
		}
	}
	out := make([]int, len(list))
	for n, x := range list {
		out[n] = x.j
	}
	return out
}

// allCandidates returns the candidates of profile i: the most similar by
// their whole documents (names, descriptions, fields), and, as names can
// dominate a document and say nothing (generated ones) or mislead, the
// most similar by their descriptions alone.
func (m *Matcher) allCandidates(i int, allowed func(j int) bool, invWords, invDesc map[string][]posting) []int {
	out := m.candidates(i, allowed, invWords, func(p *Profile) tfidf { return p.words }, m.opts.Candidates)
	seen := map[int]bool{}
	for _, j := range out {
		seen[j] = true
	}
	for _, j := range m.candidates(i, allowed, invDesc, func(p *Profile) tfidf { return p.desc }, (m.opts.Candidates+1)/2) {
		if !seen[j] {
			seen[j] = true
			out = append(out, j)
		}
	}
	return out
}

type posting struct {
	doc    int
	weight float64
}

// invert builds the inverted index of the vectors vec gives.
func (m *Matcher) invert(vec func(*Profile) tfidf) map[string][]posting {
	inv := map[string][]posting{}
	for j, p := range m.profiles {
		for _, x := range vec(p) {
			inv[x.word] = append(inv[x.word], posting{j, x.weight})
		}
	}
	return inv
}

// All proposes mappings among all the matcher's tools: each tool is
// compared with its most similar candidates and every pair scoring at
// least MinScore is returned once (From before To in ID order).
func (m *Matcher) All(ctx context.Context) ([]*mapping.Mapping, error) {
	return m.run(ctx, nil, func(i, j int) bool { return true }, allPairs)
}

// Between proposes a one-to-one mapping from the tools of collection a to
// those of collection b (two versions of one collection, say): every
// candidate pair is scored, then pairs are taken best first while both
// tools are free.
func (m *Matcher) Between(ctx context.Context, a, b string) ([]*mapping.Mapping, error) {
	inA, inB := m.in(a), m.in(b)
	return m.run(ctx, inA, func(i, j int) bool { return inA[i] && inB[j] }, oneToOne)
}

// in says, by profile index, which tools belong to collection c.
func (m *Matcher) in(c string) []bool {
	out := make([]bool, len(m.profiles))
	for i, p := range m.profiles {
		out[i] = p.Tool.Collection == c
	}
	return out
}

// Onto maps each tool of collection a onto its best counterpart in
// collection b, several tools of a may share one (SEL's specialised tools
// onto SLOT's general ones).
func (m *Matcher) Onto(ctx context.Context, a, b string) ([]*mapping.Mapping, error) {
	inA, inB := m.in(a), m.in(b)
	return m.run(ctx, inA, func(i, j int) bool { return inA[i] && inB[j] }, bestPerSource)
}

// Ranked scores each tool of collection a against its candidates in
// collection b and returns, by tool ID of a, every candidate scoring at
// least floor (after the operation graph's strengthening), best first.
// It is what Between chooses from; a caller with more evidence (package
// verify: the answers of both tools to the same calls) chooses itself.
func (m *Matcher) Ranked(ctx context.Context, a, b string, floor float64) (map[string][]*mapping.Mapping, error) {
	inA, inB := m.in(a), m.in(b)
	ms, err := m.runFloor(ctx, inA, func(i, j int) bool { return inA[i] && inB[j] }, ranked, floor)
	if err != nil {
		return nil, err
	}
	out := map[string][]*mapping.Mapping{}
	for _, mp := range ms {
		out[mp.From] = append(out[mp.From], mp)
	}
	for _, list := range out {
		sort.SliceStable(list, func(i, j int) bool {
			if list[i].Score != list[j].Score {
				return list[i].Score > list[j].Score
			}
			return list[i].To < list[j].To
		})
	}
	return out, nil
}

// How run pairs tools.
const (
	allPairs      = iota // every pair above the threshold, once
	oneToOne             // directed, each tool on either side at most once
	bestPerSource        // directed, each source tool at most once
	ranked               // directed, every pair above the threshold
)

// run compares the pairs allowed says may pair; sources, when not nil,
// says which tools allowed lets pair with any (a directed run need not
// look for the candidates of the others).
func (m *Matcher) run(ctx context.Context, sources []bool, allowed func(i, j int) bool, mode int) ([]*mapping.Mapping, error) {
	return m.runFloor(ctx, sources, allowed, mode, m.opts.MinScore)
}

// runFloor is run keeping the pairs scoring at least floor.
func (m *Matcher) runFloor(ctx context.Context, sources []bool, allowed func(i, j int) bool, mode int, floor float64) ([]*mapping.Mapping, error) {
	directed := mode != allPairs
	invWords := m.invert(func(p *Profile) tfidf { return p.words })
	invDesc := m.invert(func(p *Profile) tfidf { return p.desc })
	// The candidates of every source and the comparisons are independent
	// of each other: they are made on every core, and taken in the order
	// of the sources, as one core would.
	n := len(m.profiles)
	cands := make([][]int, n)
	err := parallel(ctx, n, func(i int) {
		if directed && sources != nil && !sources[i] {
			return // no pair from i is allowed
		}
		cands[i] = m.allCandidates(i, func(j int) bool { return allowed(i, j) || (!directed && allowed(j, i)) }, invWords, invDesc)
	})
	if err != nil {
		return nil, err
	}
	type pair struct{ from, a, b int }
	var pairs []pair
	pending := make([]int32, n) // pairs left to compare, by source
	seen := map[[2]int]bool{}
	for i, js := range cands {
		for _, j := range js {
			key := [2]int{min(i, j), max(i, j)}
			if !directed {
				if seen[key] {
					continue
				}
				seen[key] = true
			}
			a, b := i, j
			if !directed && m.profiles[b].Tool.ID < m.profiles[a].Tool.ID {
				a, b = b, a
			}
			pairs = append(pairs, pair{i, a, b})
			pending[i]++
		}
	}
	var (
		mu   sync.Mutex
		done int
	)
	tick := func(k int) {
		if m.opts.Progress == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		done += k
		m.opts.Progress(done, n)
	}
	idle := 0 // the tools with nothing to compare
	for _, c := range pending {
		if c == 0 {
			idle++
		}
	}
	if idle > 0 {
		tick(idle)
	}
	results := make([]*mapping.Mapping, len(pairs))
	err = parallel(ctx, len(pairs), func(k int) {
		p := pairs[k]
		results[k] = m.compare(m.profiles[p.a], m.profiles[p.b])
		if atomic.AddInt32(&pending[p.from], -1) == 0 {
			tick(1)
		}
	})
	if err != nil {
		return nil, err
	}
	var out []*mapping.Mapping
	for _, mp := range results {
		if mp.Score >= min(floor, m.opts.MinScore*0.8) { // kept for propagation; filtered below
			mp.Reasoning = reasoning(mp) // only for the pairs kept: most are not
			out = append(out, mp)
		}
	}
	if m.opts.Neighbours != nil {
		propagate(out, m.opts.Neighbours)
	}
	var kept []*mapping.Mapping
	for _, mp := range out {
		if mp.Score >= floor {
			kept = append(kept, mp)
		}
	}
	switch mode {
	case oneToOne:
		kept = greedyOneToOne(kept)
	case bestPerSource:
		kept = bestOf(kept)
	}
	sort.SliceStable(kept, func(x, y int) bool {
		if kept[x].From != kept[y].From {
			return kept[x].From < kept[y].From
		}
		return kept[x].To < kept[y].To
	})
	return kept, nil
}

// parallel calls fn(0) … fn(n-1) on as many goroutines as there are
// cores (GOMAXPROCS), each index once, and returns ctx's error if it
// ended first.
func parallel(ctx context.Context, n int, fn func(k int)) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				k := int(next.Add(1)) - 1
				if k >= n {
					return
				}
				fn(k)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// greedyOneToOne keeps the best pairs while both of their tools are free.
func greedyOneToOne(ms []*mapping.Mapping) []*mapping.Mapping {
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Score != ms[j].Score {
			return ms[i].Score > ms[j].Score
		}
		return ms[i].Key() < ms[j].Key()
	})
	usedFrom, usedTo := map[string]bool{}, map[string]bool{}
	var out []*mapping.Mapping
	for _, mp := range ms {
		if usedFrom[mp.From] || usedTo[mp.To] {
			continue
		}
		usedFrom[mp.From], usedTo[mp.To] = true, true
		out = append(out, mp)
	}
	return out
}

// bestOf keeps the best mapping of each source tool.
func bestOf(ms []*mapping.Mapping) []*mapping.Mapping {
	best := map[string]*mapping.Mapping{}
	for _, mp := range ms {
		if cur, ok := best[mp.From]; !ok || mp.Score > cur.Score || (mp.Score == cur.Score && mp.To < cur.To) {
			best[mp.From] = mp
		}
	}
	out := make([]*mapping.Mapping, 0, len(best))
	for _, mp := range best {
		out = append(out, mp)
	}
	return out
}

// propagate strengthens pairs whose neighbours in the operation graph
// also pair up (similarity flooding, one round): a pair's score moves a
// tenth of the way towards 1, scaled by the share of From's neighbours
// that map to one of To's neighbours.
func propagate(ms []*mapping.Mapping, neighbours func(string) []string) {
	paired := map[[2]string]bool{}
	for _, mp := range ms {
		paired[[2]string{mp.From, mp.To}] = true
		paired[[2]string{mp.To, mp.From}] = true
	}
	for _, mp := range ms {
		if mp.Signals["siblings"] == 1 {
			continue // neighbours of siblings are each other's: no news
		}
		na, nb := neighbours(mp.From), neighbours(mp.To)
		if len(na) == 0 || len(nb) == 0 {
			continue
		}
		hit := 0
		for _, x := range na {
			for _, y := range nb {
				if paired[[2]string{x, y}] {
					hit++
					break
				}
			}
		}
		if hit == 0 {
			continue
		}
		g := float64(hit) / float64(len(na))
		mp.Signals["graph"] = round3(g)
		mp.Score = round3(mp.Score + 0.1*g*(1-mp.Score))
		mp.Reasoning = reasoning(mp)
	}
}
