package drift

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

//go:embed rules
var ruleFiles embed.FS

// Rules are the data the operators draw from: synonym and abbreviation
// tables, action verbs, default flips, nesting groups, error styles, path
// prefixes and host rewrites. DefaultRules reads the ones shipped in
// drift/rules; ReadRules reads a folder laid out the same way.
type Rules struct {
	// Synonyms maps a word or snake_case phrase to its synonyms, in file
	// order; every pair is recorded in both directions.
	Synonyms map[string][]string
	// SynonymPairs is the number of pairs in the table.
	SynonymPairs int
	// Abbreviations maps a word to its abbreviation and back.
	Abbreviations map[string][]string
	// Actions maps a leading verb to its replacements.
	Actions map[string][]string
	// Flips maps a default value (canonical JSON) to its flipped value.
	Flips map[string]json.RawMessage
	// NestGroups are the groups of related flat parameters.
	NestGroups []NestGroup
	// ErrorStyles are the error formats a version may switch to.
	ErrorStyles []ErrorStyle
	// PathPrefixes are the prefixes a migrated path may move under.
	PathPrefixes []string
	// Hosts are the host migrations, tried in order.
	Hosts []HostRule
}

// NestGroup is a set of related flat parameters that nesting groups into
// one object parameter.
type NestGroup struct {
	Name string `json:"name"`
	// Into are the names the object may get, tried in order.
	Into []string `json:"into"`
	// Min is how many members must be present.
	Min int `json:"min"`
	// All says every member must be present (latitude without longitude
	// is not a position).
	All     bool         `json:"all,omitempty"`
	Members []NestMember `json:"members"`
}

// NestMember is one member of a nesting group: any of Names, keyed Key in
// the object.
type NestMember struct {
	Key   string   `json:"key"`
	Names []string `json:"names"`
}

// HostRule rewrites a host name matching Match into Replace ($1 …).
type HostRule struct {
	Match   string `json:"match"`
	Replace string `json:"replace"`
	re      *regexp.Regexp
}

// DefaultRules returns the rules shipped with toolenv (drift/rules).
func DefaultRules() (*Rules, error) {
	sub, err := fs.Sub(ruleFiles, "rules")
	if err != nil {
		return nil, err
	}
	return ReadRules(sub)
}

// ReadRules reads rules from a folder holding synonyms.tsv,
// abbreviations.tsv, actions.tsv, default_flips.tsv, nest_groups.json,
// error_styles.json and paths.json.
func ReadRules(fsys fs.FS) (*Rules, error) {
	r := &Rules{Synonyms: map[string][]string{}, Abbreviations: map[string][]string{}, Actions: map[string][]string{}, Flips: map[string]json.RawMessage{}}
	addBoth := func(m map[string][]string, a, b string) {
		if !contains(m[a], b) {
			m[a] = append(m[a], b)
		}
		if !contains(m[b], a) {
			m[b] = append(m[b], a)
		}
	}
	err := readTSV(fsys, "synonyms.tsv", func(f []string) error {
		if f[0] == f[1] {
			return fmt.Errorf("%q is paired with itself", f[0])
		}
		if contains(r.Synonyms[f[0]], f[1]) {
			return fmt.Errorf("pair %s/%s is listed twice", f[0], f[1])
		}
		addBoth(r.Synonyms, f[0], f[1])
		r.SynonymPairs++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := readTSV(fsys, "abbreviations.tsv", func(f []string) error { addBoth(r.Abbreviations, f[0], f[1]); return nil }); err != nil {
		return nil, err
	}
	err = readTSV(fsys, "actions.tsv", func(f []string) error {
		r.Actions[f[0]] = strings.Split(f[1], ",")
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = readTSV(fsys, "default_flips.tsv", func(f []string) error {
		from, err := toolenv.CanonicalizeJSON([]byte(f[0]))
		if err != nil {
			return fmt.Errorf("%s is not JSON: %w", f[0], err)
		}
		to, err := toolenv.CanonicalizeJSON([]byte(f[1]))
		if err != nil {
			return fmt.Errorf("%s is not JSON: %w", f[1], err)
		}
		r.Flips[string(from)] = to
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := readJSON(fsys, "nest_groups.json", &r.NestGroups); err != nil {
		return nil, err
	}
	if err := readJSON(fsys, "error_styles.json", &r.ErrorStyles); err != nil {
		return nil, err
	}
	for _, s := range r.ErrorStyles {
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("drift rules: error_styles.json: %w", err)
		}
	}
	var paths struct {
		Prefixes []string   `json:"prefixes"`
		Hosts    []HostRule `json:"hosts"`
	}
	if err := readJSON(fsys, "paths.json", &paths); err != nil {
		return nil, err
	}
	r.PathPrefixes = paths.Prefixes
	for _, h := range paths.Hosts {
		re, err := regexp.Compile(h.Match)
		if err != nil {
			return nil, fmt.Errorf("drift rules: paths.json: host rule %q: %w", h.Match, err)
		}
		h.re = re
		r.Hosts = append(r.Hosts, h)
	}
	return r, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// readTSV calls fn with the two fields of every non-comment line.
func readTSV(fsys fs.FS, name string, fn func([]string) error) error {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return fmt.Errorf("drift rules: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Split(text, "\t")
		if len(f) != 2 || f[0] == "" || f[1] == "" {
			return fmt.Errorf("drift rules: %s:%d: want two tab-separated fields", name, line)
		}
		if err := fn(f); err != nil {
			return fmt.Errorf("drift rules: %s:%d: %w", name, line, err)
		}
	}
	return sc.Err()
}

func readJSON(fsys fs.FS, name string, v any) error {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return fmt.Errorf("drift rules: %w", err)
	}
	if err := toolenv.DecodeJSON(data, v); err != nil {
		return fmt.Errorf("drift rules: %s: %w", name, err)
	}
	return nil
}
