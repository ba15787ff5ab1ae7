package world

import (
	"database/sql"
	"fmt"
	"strings"
	"unicode/utf8"

	toolenv "github.com/toolenv/toolenv"
	"modernc.org/sqlite"
)

// A user's SQL (an initial state's script, an end-state check) runs on a
// private copy of the database, but SQLite can reach past it: ATTACH
// opens (and creates) any file, VACUUM INTO writes one, PRAGMA changes
// how the connection behaves (query_only among them) and a transaction
// statement ends the transaction toolenv undoes. So the text is read
// statement by statement first and only the statements it needs are
// let through; connections that run users' SQL also attach nothing
// (SQLITE_LIMIT_ATTACHED 0).

// limitAttached is SQLITE_LIMIT_ATTACHED (sqlite3.h).
const limitAttached = 7

// noAttach forbids ATTACH on c.
func noAttach(c *sql.Conn) error {
	_, err := sqlite.Limit(c, limitAttached, 0)
	return err
}

// sqlStatement is one statement of SQL text: its text, its first
// keyword, upper-cased ("" for a statement of comments only; the first
// character when the statement starts with something else), and the
// first parameter it holds ($a, :a, @a, #a, ?1), if any: toolenv binds
// none.
type sqlStatement struct {
	text, first, param string
}

// splitSQL cuts SQL text into statements at the semicolons outside
// strings, quoted identifiers, comments and parameters, token by token
// as SQLite's tokenizer reads them (sqlite3GetToken), so that a
// statement SQLite would run is never hidden inside what the splitter
// took for a string. Joining the texts gives the input back.
func splitSQL(q string) []sqlStatement {
	var out []sqlStatement
	start := 0
	var cur sqlStatement
	note := func(first string) {
		if cur.first == "" {
			cur.first = first
		}
	}
	i := 0
	for i < len(q) {
		c := q[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			note(string(c))
			j := i + 1
			for j < len(q) {
				if q[j] == c {
					if j+1 < len(q) && q[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			i = min(j+1, len(q))
		case c == '[':
			note("[")
			j := strings.IndexByte(q[i:], ']')
			if j < 0 {
				i = len(q)
			} else {
				i += j + 1
			}
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				i = len(q)
			} else {
				i += j + 1
			}
		case c == '/' && i+2 < len(q) && q[i+1] == '*':
			// "/*" ending the text is a slash and a star to SQLite.
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				i = len(q)
			} else {
				i += j + 4
			}
		case c == ';':
			cur.text = q[start : i+1]
			out = append(out, cur)
			start, cur = i+1, sqlStatement{}
			i++
		case c == '?':
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			note("?")
			if cur.param == "" {
				cur.param = q[i:j]
			}
			i = j
		case c == '$' || c == '@' || c == ':' || c == '#':
			j := variableEnd(q, i)
			note(string(c))
			if cur.param == "" {
				cur.param = q[i:j]
			}
			i = j
		case isWordByte(c):
			j := i
			for j < len(q) && (isWordByte(q[j]) || q[j] == '$') {
				j++
			}
			note(strings.ToUpper(q[i:j]))
			i = j
		default:
			if c > ' ' || c == 0 {
				note(string(c)) // not a keyword: refused
			}
			i++
		}
	}
	if start < len(q) {
		cur.text = q[start:]
		out = append(out, cur)
	}
	return out
}

// variableEnd returns where the parameter starting at q[i] ($, @, : or
// #) ends, as SQLite reads it: identifier characters, "::" and a TCL
// "(...)" suffix that runs to the first space or ")" (semicolons and
// quotes included).
func variableEnd(q string, i int) int {
	n := 0
	j := i + 1
	for j < len(q) {
		c := q[j]
		switch {
		case isWordByte(c) || c == '$':
			n++
			j++
		case c == '(' && n > 0:
			j++
			for j < len(q) && !isSQLSpace(q[j]) && q[j] != ')' {
				j++
			}
			if j < len(q) && q[j] == ')' {
				j++
			}
			return j
		case c == ':' && j+1 < len(q) && q[j+1] == ':':
			j += 2
		default:
			return j
		}
	}
	return j
}

// isSQLSpace reports whether SQLite reads c as white space.
func isSQLSpace(c byte) bool {
	return c == ' ' || c >= '\t' && c <= '\r'
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// checkText refuses what no user's SQL may hold anywhere: a NUL byte
// (SQLite stops reading there) and parameters.
func checkText(what, q string, stmts []sqlStatement) error {
	if i := strings.IndexByte(q, 0); i >= 0 {
		return &toolenv.Error{Status: toolenv.StatusInvalidArguments,
			Message: fmt.Sprintf("%s holds a NUL byte at offset %d", what, i),
			Hint:    "remove it (SQLite would stop reading the SQL there)"}
	}
	for _, s := range stmts {
		if s.param != "" {
			return &toolenv.Error{Status: toolenv.StatusInvalidArguments,
				Message: fmt.Sprintf("%s holds a parameter (%s) in %s", what, clip(s.param, 40), clip(strings.TrimSpace(s.text), 80)),
				Hint:    "toolenv binds no parameters: write the value itself (quote a string, 'like this')"}
		}
	}
	return nil
}

// scriptKeywords are the statements an initial state's script may hold.
var scriptKeywords = map[string]bool{"INSERT": true, "UPDATE": true, "DELETE": true, "REPLACE": true, "WITH": true, "SELECT": true, "VALUES": true}

// checkScript refuses an initial state's script holding a statement
// other than INSERT, UPDATE, DELETE, REPLACE (or a WITH or SELECT).
func checkScript(script string) error {
	stmts := splitSQL(script)
	if err := checkText("the initial state's SQL", script, stmts); err != nil {
		return err
	}
	for _, s := range stmts {
		if s.first == "" || scriptKeywords[s.first] {
			continue
		}
		return &toolenv.Error{Status: toolenv.StatusInvalidArguments,
			Message: fmt.Sprintf("the initial state's SQL holds a statement starting with %s (%s): an initial state only changes rows", s.first, clip(strings.TrimSpace(s.text), 80)),
			Hint:    "keep INSERT, UPDATE, DELETE and REPLACE statements (toolenv runs the script in a transaction of its own, on a private copy of the database); quote an identifier that reads as a keyword"}
	}
	return nil
}

// CheckQuery refuses SQL that is not one query (SELECT, VALUES or WITH):
// an end-state check reads the world and nothing else.
func CheckQuery(q string) error {
	stmts := splitSQL(q)
	if err := checkText("a check's SQL", q, stmts); err != nil {
		return err
	}
	n := 0
	for _, s := range stmts {
		if s.first == "" {
			continue
		}
		n++
		if s.first != "SELECT" && s.first != "WITH" && s.first != "VALUES" {
			return &toolenv.Error{Status: toolenv.StatusInvalidArguments,
				Message: fmt.Sprintf("a check's SQL must be a query, not a statement starting with %s (%s)", s.first, clip(strings.TrimSpace(s.text), 80)),
				Hint:    "write one SELECT whose rows the check compares with its expected rows"}
		}
	}
	if n != 1 {
		return &toolenv.Error{Status: toolenv.StatusInvalidArguments,
			Message: fmt.Sprintf("a check's SQL must be one query, got %d statements", n),
			Hint:    "write one SELECT whose rows the check compares with its expected rows"}
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
