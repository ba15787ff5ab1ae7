// Package sqlplan parses BIRD's SQLite-dialect SQL and resolves it into a
// small query plan: sources (tables with their aliases and joins), WHERE,
// GROUP BY, HAVING, the select list, ORDER BY and LIMIT, with every column
// bound to the source it comes from and every literal keeping its byte span
// in the original text.
//
// Parsing uses github.com/sqlc-dev/meyer, a hand-written parser of SQLite's
// own grammar: it parses all 1,389 BIRD dev queries as written (backtick
// identifiers, CAST(x AS REAL), IIF, SUBSTR, strftime, `Match` as a table
// name, "double-quoted" strings), where the TiDB (MySQL) parser needs a
// rewriting step and still rejects 35. See docs/nl2sql.md.
//
// Build fails with an *Error whose Reason is a short, stable code
// ("parse", "unknown column", "window function", ...) so coverage reports
// can group failures.
package sqlplan
