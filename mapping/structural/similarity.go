package structural

import (
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/toolenv/toolenv/mapping/terms"
)

// corpus holds document frequencies for TF-IDF vectors.
type corpus struct {
	df map[string]int
	n  int
}

func newCorpus() *corpus { return &corpus{df: map[string]int{}} }

func (c *corpus) add(words []string) {
	c.n++
	seen := map[string]bool{}
	for _, w := range words {
		if !seen[w] {
			seen[w] = true
			c.df[w]++
		}
	}
}

func (c *corpus) idf(w string) float64 {
	return math.Log(float64(c.n+1)/float64(c.df[w]+1)) + 1
}

// tfidf is a TF-IDF vector: its words in sorted order with their
// weights. Sums over it follow that order, so that a score's last digits
// do not change from one run to the next as they would in a map's order.
type tfidf []weighted

// weighted is one word of a tfidf vector.
type weighted struct {
	word   string
	weight float64
}

// vector returns the L2-normalised TF-IDF vector of words (sub-linear
// term frequency), or nil for no words.
func (c *corpus) vector(words []string) tfidf {
	if len(words) == 0 {
		return nil
	}
	sorted := slices.Clone(words)
	slices.Sort(sorted)
	v := make(tfidf, 0, len(sorted))
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		v = append(v, weighted{sorted[i], (1 + math.Log(float64(j-i))) * c.idf(sorted[i])})
		i = j
	}
	var norm float64
	for _, x := range v {
		norm += x.weight * x.weight
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i].weight /= norm
	}
	return v
}

// cosine is the dot product of two normalised vectors (a merge of their
// sorted words).
func cosine(a, b tfidf) float64 {
	var s float64
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i].word < b[j].word:
			i++
		case a[i].word > b[j].word:
			j++
		default:
			s += a[i].weight * b[j].weight
			i++
			j++
		}
	}
	return s
}

// Weights of the signals of a field comparison; a signal missing on
// either side (no description, no values) drops out and the others are
// rescaled.
const (
	wFieldName  = 0.45
	wFieldDesc  = 0.30
	wFieldValue = 0.15
	wFieldType  = 0.05
	wFieldPos   = 0.05
)

// fieldScore compares two fields of the same side and says which signal
// decided.
func fieldScore(a, b *Field) (float64, string) {
	s, sig := fieldSignals(a, b)
	return s, sig.reason(a, b)
}

// signals are what fieldSignals compared, for the reason of a kept pair.
type signals struct {
	opaque, hasDesc, hasVals, known bool
	name, desc, vals, typ           float64
}

// fieldSignals scores two fields of the same side, and returns what it
// compared: alignFields scores every pair of two tools' fields but says
// why only for the pairs it keeps.
func fieldSignals(a, b *Field) (float64, signals) {
	// A generated name (ARG_7) is no evidence: the name signal is left
	// out, and what remains must say more than type and position.
	sig := signals{opaque: a.opaque || b.opaque}
	var sum, weight float64
	if !sig.opaque {
		sig.name = nameSimilarity(a, b)
		sum, weight = wFieldName*sig.name, wFieldName
	}
	sig.hasDesc = a.desc != nil && b.desc != nil
	if sig.hasDesc {
		sig.desc = cosine(a.desc, b.desc)
		if sameDescription(a, b) {
			sig.desc = 1
		}
		sum += wFieldDesc * sig.desc
		weight += wFieldDesc
	}
	sig.hasVals = len(a.Values) > 0 && len(b.Values) > 0
	if sig.hasVals {
		sig.vals = overlap(a.Values, b.Values)
		sum += wFieldValue * sig.vals
		weight += wFieldValue
	}
	sig.typ, sig.known = typeCompat(a.Type, b.Type)
	if sig.known {
		sum += wFieldType * sig.typ
		weight += wFieldType
	}
	sum += wFieldPos * (1 - math.Abs(a.Position-b.Position))
	weight += wFieldPos
	s := sum / weight
	if sig.known && sig.typ == 0 {
		s *= 0.5
	}
	if sig.opaque && !sig.hasDesc && !sig.hasVals {
		s *= 0.5 // type and position alone
	}
	return s, sig
}

// reason says which signal decided the pair a, b.
func (sig signals) reason(a, b *Field) string {
	segA, _, _ := a.words()
	segB, _, _ := b.words()
	switch {
	case !sig.opaque && strings.EqualFold(segA, segB):
		return "same name"
	case !sig.opaque && sig.name >= 0.99:
		return "synonym"
	case sig.hasDesc && sig.desc >= 0.8:
		return "description"
	case sig.hasVals && sig.vals >= 0.5:
		return "values"
	case sig.name < 0.3 && sig.known && sig.typ == 1:
		return "type and position"
	}
	return "similar name"
}

// sameDescription says whether two fields' descriptions are one text but
// for case and surrounding space. ASCII texts fold byte for byte, so two
// of different lengths differ without a comparison (most pairs: every
// field is compared with many).
func sameDescription(a, b *Field) bool {
	da, asciiA := a.trimmedDescription()
	db, asciiB := b.trimmedDescription()
	if asciiA && asciiB && len(da) != len(db) {
		return false
	}
	return strings.EqualFold(da, db)
}

// nameSimilarity is the best of the word overlap of the last path
// segments, of the whole paths, and the character trigram similarity of
// the last segments.
func nameSimilarity(a, b *Field) float64 {
	la, lastA, fullA := a.words()
	lb, lastB, fullB := b.words()
	if strings.EqualFold(la, lb) {
		return 1
	}
	s := jaccard(lastA, lastB)
	if f := jaccard(fullA, fullB); f > s {
		s = f
	}
	if t := 0.9 * fieldTrigrams(a, la).Dice(fieldTrigrams(b, lb)); t > s {
		s = t
	}
	// A leaf whose words are all among the other's whole path (city →
	// location.city_name) is close, but not as close as the same name:
	// "Id" is in "StateCode" (code ≈ identifier) too.
	if c := 0.75 * containment(a.lastWords(), fullB); c > s {
		s = c
	}
	if c := 0.75 * containment(b.lastWords(), fullA); c > s {
		s = c
	}
	return s
}

// jaccard is |a ∩ b| / |a ∪ b| of two word sets, sorted lists without
// repeats (wordSet; terms.Jaccard of the lists they were made from); 0
// when both are empty.
func jaccard(sa, sb []wordKey) float64 {
	if len(sa)+len(sb) == 0 {
		return 0
	}
	inter := commonSorted(sa, sb)
	return float64(inter) / float64(len(sa)+len(sb)-inter)
}

// commonSorted is |a ∩ b| of two word sets (wordSet).
func commonSorted(a, b []wordKey) int {
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch c := compareWords(a[i], b[j]); {
		case c == 0:
			n++
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	return n
}

// common is |a ∩ b| of two word sets.
func common(sa, sb map[string]bool) int {
	n := 0
	for w := range sa {
		if sb[w] {
			n++
		}
	}
	return n
}

// dice is 2|a ∩ b| / (|a| + |b|) of two word sets (terms.Dice of the
// lists they were made from); 0 when both are empty.
func dice(sa, sb map[string]bool) float64 {
	if len(sa)+len(sb) == 0 {
		return 0
	}
	inter := common(sa, sb)
	return 2 * float64(inter) / float64(len(sa)+len(sb))
}

// containment is the share of a's words (a list, repeats counted) found
// in the set in (wordSet).
func containment(a []wordKey, in []wordKey) float64 {
	if len(a) == 0 || len(in) == 0 {
		return 0
	}
	n := 0
	for _, w := range a {
		if _, ok := slices.BinarySearchFunc(in, w, compareWords); ok {
			n++
		}
	}
	return float64(n) / float64(len(a))
}

// fieldTrigrams are the trigrams of f's last path segment last: made
// once when the field was profiled, or now for a field made otherwise.
func fieldTrigrams(f *Field, last string) terms.TrigramCodes {
	if f.tri != nil {
		return f.tri
	}
	return terms.NewTrigramCodes(last)
}

func lastSegment(path string) string {
	p := strings.ReplaceAll(path, "[]", "")
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// overlap is the overlap coefficient |a ∩ b| / min(|a|, |b|).
func overlap(a, b map[string]bool) float64 {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) == 0 {
		return 0
	}
	n := 0
	for v := range a {
		if b[v] {
			n++
		}
	}
	return float64(n) / float64(len(a))
}

// typeCompat scores two JSON Schema types: 1 equal, 0.8 integer/number,
// 0.5 a scalar against a string (types drift to strings and back), 0 for
// a structure against a scalar. known is false when either is unknown.
func typeCompat(a, b string) (float64, bool) {
	if a == "" || b == "" {
		return 0, false
	}
	if a == b {
		return 1, true
	}
	num := func(t string) bool { return t == "integer" || t == "number" }
	switch {
	case num(a) && num(b):
		return 0.8, true
	case a == "string" && (num(b) || b == "boolean"), b == "string" && (num(a) || a == "boolean"):
		return 0.5, true
	case a == "array" || b == "array" || a == "object" || b == "object":
		return 0, true
	}
	return 0.3, true
}

// pairScore is one candidate field pair.
type pairScore struct {
	a, b   int
	score  float64
	reason string
}

// alignFields pairs the fields of as with those of bs one-to-one,
// maximising the total score, and keeps the pairs scoring at least min.
// It returns the pairs and the alignment's quality in [0, 1]: the kept
// scores summed over the kept pairs plus the fields left unpaired, a
// required field left out counting fully and an optional one counting
// optWeight (a tool with extra optional parameters can still stand in).
// Every field counts with its IDF weight, so that fields most tools have
// (a response envelope's "rows", SLOT's "label") say little.
func alignFields(as, bs []*Field, min, optWeight float64) ([]pairScore, float64) {
	if len(as) == 0 || len(bs) == 0 {
		return nil, 0
	}
	scores := make([][]float64, len(as))
	sigs := make([][]signals, len(as))
	for i, a := range as {
		scores[i] = make([]float64, len(bs))
		sigs[i] = make([]signals, len(bs))
		for j, b := range bs {
			scores[i][j], sigs[i][j] = fieldSignals(a, b)
		}
	}
	var out []pairScore
	var total, denom float64
	pairedA, pairedB := map[int]bool{}, map[int]bool{}
	for i, j := range assign(scores) {
		if j < 0 || scores[i][j] < min {
			continue
		}
		out = append(out, pairScore{a: i, b: j, score: scores[i][j], reason: sigs[i][j].reason(as[i], bs[j])})
		w := (as[i].weight() + bs[j].weight()) / 2
		total += w * scores[i][j]
		denom += w
		pairedA[i], pairedB[j] = true, true
	}
	for _, side := range []struct {
		fs     []*Field
		paired map[int]bool
	}{{as, pairedA}, {bs, pairedB}} {
		for i, f := range side.fs {
			switch {
			case side.paired[i]:
			case f.Required:
				denom += f.weight()
			default:
				denom += optWeight * f.weight()
			}
		}
	}
	sort.Slice(out, func(x, y int) bool { return out[x].a < out[y].a })
	if denom == 0 {
		return out, 0
	}
	return out, total / denom
}
