// Package answer holds NL2SQL answers as tables and compares them.
//
// A gold answer is the result of the gold SQL; a tool sequence's answer is
// assembled from the result bodies of its answer steps (FromBodies): a
// `rows` result contributes its columns, a `list` one column, a `value`
// one column of one row, side by side.
//
// Equal is the documented comparison used to verify tasks (and offered to
// evaluation): column count and row count must match; rows are compared as
// a multiset unless the order is part of the answer; numbers (and text that
// is a number, such as strftime's "2019") compare numerically within a
// relative tolerance of 1e-6; NULL equals only NULL; other text compares
// exactly (case-sensitive); column names are ignored.
package answer
