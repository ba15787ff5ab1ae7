// Package sqlrest is the live backend of the REST tool collection built
// from BIRD (nl2api): each tool is a GET endpoint whose SQL template
// (Tool.Meta "sql", with :name placeholders) runs on a read-only SQLite
// database with the call's arguments bound as parameters, never spliced
// into the text. Results are {"columns", "row_count", "rows"}; more rows
// than the cap fail with too_large, a slow query is interrupted at the
// per-call timeout.
package sqlrest
