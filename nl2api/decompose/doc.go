// Package decompose turns a planned SQL query (nl2api/sqlplan) into the
// gold call sequence of the SLOT tools (backend/sqltools), and SLOT
// sequences into SEL ones.
//
// The joins become the hidden initialisation step (one starting table
// with <prefix>_<column> columns; each uncorrelated subquery gets its own
// starting table). Then, in the order SQL evaluates them: column transforms
// the WHERE clause needs, the WHERE conditions as filter_data calls (OR
// branches as filters of the same table joined by combine_filters, IN and
// BETWEEN as conditions, scalar and IN subqueries as earlier steps whose
// labels are the values), grouping with per-group aggregates and HAVING
// filters, sorts for ORDER BY (last key first: sorts are stable), and
// retrieve_data for the select list; aggregate select lists become
// aggregate_data and calculate steps (CASE/IIF inside aggregates become
// filters).
//
// A query the tools cannot express fails with an *sqlplan.Error whose
// Reason groups it in the build report. Whether a sequence reproduces the
// SQL's answer is not decided here: the build executes it (verification).
package decompose
