// Package endpoint turns a BIRD question's SQL into a REST endpoint: the
// literals of its WHERE and HAVING clauses (in the query and its
// subqueries) become named, typed, described query parameters, the SQL
// becomes a template with :name placeholders (the rest of the text is kept
// as written, so the endpoint computes exactly what the SQL does), and the
// endpoint gets a name, a path and a description generated from the SQL
// and the column descriptions, deterministically and without an LLM.
//
// Questions whose templates are equal (same SQL up to the literal values,
// whitespace and keyword case) share one endpoint (Merge).
package endpoint
