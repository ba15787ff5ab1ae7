package simulate

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolenv/toolenv/internal/ajvcompat"
)

// compiledPattern is a JSON Schema pattern compiled as Ajv runs it, and
// its syntax tree (simplified) to generate strings from.
type compiledPattern struct {
	re   *regexp.Regexp
	tree *syntax.Regexp
}

// compilePattern compiles p; nil when it does not compile as Ajv
// compiles it.
func compilePattern(p string) *compiledPattern {
	re, err := ajvcompat.Pattern(p)
	if err != nil {
		return nil
	}
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil
	}
	return &compiledPattern{re: re, tree: tree.Simplify()}
}

// matches reports whether s matches the pattern (an unanchored search); a
// pattern that does not compile matches nothing.
func (cp *compiledPattern) matches(s string) bool { return cp != nil && cp.re.MatchString(s) }

// generate makes a string the pattern matches, of at least minLen and at
// most maxLen runes (maxLen < 0: no bound), varied by h. It walks the
// pattern's syntax tree, choosing one alternative and a number of
// repetitions, and tries a few choices until the string matches and
// fits; ok is false when none does.
func (cp *compiledPattern) generate(minLen, maxLen int, h uint64) (string, bool) {
	if cp == nil {
		return "", false
	}
	for attempt := range 24 {
		// Extra repetitions grow with the attempt, to reach minLen.
		pg := &patternGen{h: h + uint64(attempt)*0x9e3779b97f4a7c15, extra: attempt / 3, alt: attempt % 3}
		var b strings.Builder
		pg.walk(&b, cp.tree, 0)
		s := b.String()
		n := utf8.RuneCountInString(s)
		if n < minLen || maxLen >= 0 && n > maxLen {
			continue
		}
		if cp.re.MatchString(s) {
			return s, true
		}
	}
	return "", false
}

// patternString makes a string the JSON Schema pattern p matches (see
// compiledPattern.generate).
func patternString(p string, minLen, maxLen int, h uint64) (string, bool) {
	return compilePattern(p).generate(minLen, maxLen, h)
}

// patternMatches reports whether s matches the JSON Schema pattern p as
// Ajv runs it.
func patternMatches(p, s string) bool { return compilePattern(p).matches(s) }

type patternGen struct {
	h     uint64
	extra int // repetitions beyond the least, for each unbounded repeat
	alt   int // which alternative of an alternation (modulo its count)
	n     int // nodes walked, to vary choices
}

func (pg *patternGen) next() uint64 {
	pg.n++
	return mix64(pg.h + uint64(pg.n)*0x9e3779b97f4a7c15)
}

// mix64 is splitmix64's finalizer: a well-spread function of x.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func (pg *patternGen) walk(b *strings.Builder, re *syntax.Regexp, depth int) {
	if depth > 64 || b.Len() > 4096 {
		return
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			b.WriteRune(r)
		}
	case syntax.OpCharClass:
		b.WriteRune(pg.classRune(re.Rune))
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteRune(rune('a' + pg.next()%26))
	case syntax.OpCapture:
		for _, s := range re.Sub {
			pg.walk(b, s, depth+1)
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			pg.walk(b, s, depth+1)
		}
	case syntax.OpAlternate:
		pg.walk(b, re.Sub[pg.alt%len(re.Sub)], depth+1)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, -1
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
		}
		n := lo
		if re.Op != syntax.OpQuest || pg.extra > 0 {
			n = lo + pg.extra
			if lo == 0 && re.Op != syntax.OpQuest {
				n = max(n, 1) // one, as a value would have, rather than none
			}
		}
		if hi >= 0 && n > hi {
			n = hi
		}
		for range min(n, 256) {
			pg.walk(b, re.Sub[0], depth+1)
		}
	}
	// Anchors, word boundaries and empty matches write nothing.
}

// classRune picks a rune of a character class (pairs of ranges),
// preferring letters and digits, then printable ASCII.
func (pg *patternGen) classRune(ranges []rune) rune {
	if len(ranges) == 0 {
		return 'a'
	}
	h := pg.next()
	var nice []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		for r := max(lo, 0x21); r <= hi && r < 0x7f && len(nice) < 96; r++ {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				nice = append(nice, r)
			}
		}
	}
	if len(nice) > 0 {
		return nice[h%uint64(len(nice))]
	}
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1] && r < 0x7f; r++ {
			if r >= 0x20 {
				return r
			}
		}
	}
	lo := ranges[0]
	if lo < 0x20 && ranges[1] >= 0x20 {
		lo = 0x20
	}
	if !utf8.ValidRune(lo) {
		return 'a'
	}
	return lo
}
