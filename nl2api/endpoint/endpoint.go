package endpoint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sqlc-dev/meyer/ast"
	"github.com/toolenv/toolenv/internal/ident"
	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

// Column describes a column for parameter and endpoint descriptions.
type Column struct {
	Name        string // readable name ("superhero name"), may be empty
	Description string
	Values      string // value description (units, codes)
}

// Describer returns what is known about table.column.
type Describer func(table, column string) Column

// Param is one query parameter of an endpoint.
type Param struct {
	// Name is an ASCII identifier; Title the same words with the
	// database's own spelling (Unicode kept).
	Name  string `json:"name"`
	Title string `json:"title,omitempty"`
	Type  string `json:"type"` // "string", "integer" or "number"
	// Format is "date" for a parameter whose query value was a date
	// (YYYY-MM-DD): dates compare as text in SQL, so a strict collection
	// must refuse a value that is not one.
	Format      string `json:"format,omitempty"`
	Description string `json:"description"`
	// Column is the table.column the parameter is compared with.
	Column string `json:"column,omitempty"`
	// NonEmpty marks text compared for equality (=, IN): an empty value
	// is refused (it is what a value cut at an unencoded '#' becomes).
	NonEmpty bool `json:"non_empty,omitempty"`
	pos, end int
	base     string
	raw      string
}

// Endpoint is one GET endpoint.
type Endpoint struct {
	DB   string
	Name string
	// Title is the name in words, in the database's own spelling.
	Title       string
	Path        string
	Description string
	// Template is the SQL with :name placeholders.
	Template string
	Params   []Param
	// Key identifies equivalent templates.
	Key string
	// Columns names the result columns; ColumnPhrases says what each
	// holds, in words.
	Columns       []string
	ColumnPhrases []string
}

// Instance is one question's endpoint and its arguments.
type Instance struct {
	Endpoint *Endpoint
	// Args are the question's parameter values (string, int64, float64).
	Args map[string]any
}

// Make builds the endpoint of one question: q is its plan, sql the text
// q was parsed from.
func Make(q *sqlplan.Query, sql, db string, describe Describer) (*Instance, error) {
	if describe == nil {
		describe = func(string, string) Column { return Column{} }
	}
	m := &maker{sql: sql, describe: describe, used: map[string]int{}}
	m.query(q)
	sort.Slice(m.params, func(i, j int) bool { return m.params[i].pos < m.params[j].pos })
	// Edits of the SQL text: literals become :name placeholders, and
	// computed result columns get an alias in words, so that the response
	// names its columns without SQL text.
	type edit struct {
		pos, end int
		text     string
	}
	var edits []edit
	args := map[string]any{}
	for _, p := range m.params {
		edits = append(edits, edit{p.pos, p.end, ":" + p.Name})
		args[p.Name] = m.values[p.Name]
	}
	cols, aliased := resultColumns(q)
	if stmt, err := sqlplan.Parse(sql); err == nil && len(stmt.Cores) > 0 {
		if core, ok := stmt.Cores[0].(*ast.SelectQuery); ok && len(core.Columns) == len(cols) {
			for i, rc := range core.Columns {
				if aliased[i] && rc.Alias == nil {
					edits = append(edits, edit{rc.End(), rc.End(), " AS " + quoteIdent(cols[i])})
				}
			}
		}
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].pos < edits[j].pos })
	var b strings.Builder
	last := 0
	for _, ed := range edits {
		if ed.pos < last {
			return nil, &sqlplan.Error{Reason: "overlapping literals", Detail: sql[ed.pos:ed.end]}
		}
		b.WriteString(sql[last:ed.pos])
		b.WriteString(ed.text)
		last = ed.end
	}
	b.WriteString(sql[last:])
	e := &Endpoint{DB: db, Template: strings.TrimSpace(b.String()), Params: m.params}
	e.Key = db + "\x00" + normalize(e.Template)
	raw := m.name(q)
	e.Name = "get_" + paramBase(raw)
	e.Title = Title(raw)
	e.Description = m.describeQuery(q) + " Database: " + db + "."
	e.Columns = cols
	for _, it := range q.Select {
		phrase := ""
		switch x := it.Expr.(type) {
		case nil:
		case *sqlplan.ColumnRef:
			if x.Source != nil && x.Source.Table != nil {
				phrase = strings.TrimSuffix(oneLine(describe(x.Source.Table.Name, x.Column).Description, 80), ".")
			}
		default:
			phrase = m.exprPhrase(it.Expr)
		}
		e.ColumnPhrases = append(e.ColumnPhrases, phrase)
	}
	return &Instance{Endpoint: e, Args: args}, nil
}

// normalize collapses whitespace and lower-cases text outside string
// literals, so that templates differing only in layout are equal.
func normalize(s string) string {
	var b strings.Builder
	inStr := false
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			b.WriteByte(c)
			if c == '\'' {
				inStr = false
			}
			continue
		}
		switch {
		case c == '\'':
			inStr = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			space = true
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteByte(c)
	}
	return b.String()
}

// Merge gives equivalent endpoints one shared endpoint and unique names.
// Instances are processed in order; the first instance of a template
// decides its endpoint. It returns the distinct endpoints in order.
func Merge(instances []*Instance) []*Endpoint {
	byKey := map[string]*Endpoint{}
	var out []*Endpoint
	names := map[string]bool{}
	for _, in := range instances {
		if e, ok := byKey[in.Endpoint.Key]; ok {
			in.Endpoint = e
			continue
		}
		e := in.Endpoint
		byKey[e.Key] = e
		// Names are made unique after they are cut to 64 bytes: two long
		// names may share their first 56.
		name := limitName(e.Name)
		for n := 2; names[name]; n++ {
			name = limitName(fmt.Sprintf("%s_v%d", e.Name, n))
		}
		e.Name = name
		names[e.Name] = true
		e.Path = PathPrefix(e.DB) + strings.TrimPrefix(e.Name, "get_")
		out = append(out, e)
	}
	return out
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// PathPrefix is the path REST endpoints of database db start with:
// /v1/bird/<db as an ASCII identifier>/.
func PathPrefix(db string) string { return "/v1/bird/" + ident.Column(db) + "/" }

// limitName keeps tool names within the 64 bytes models accept, ending a
// shortened name with a hash of the full one.
func limitName(name string) string { return ident.Limit(name, 64) }
