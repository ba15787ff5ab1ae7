// Package graph holds the two graphs of API mapping.
//
// The operation graph links the operations of one API (one collection,
// or one ToolBench tool within it): two operations are neighbours when
// they share fields — an argument or response field of the same
// normalised name — or schemas. The structural mapper uses it to
// strengthen a pair of operations whose neighbours also pair up, and the
// LLM probe to put related operations in one prompt, so that operations
// sharing fields are mapped together.
//
// Clusters are groups of mutually substitutable tools: the connected
// components of the mapping graph, split where a component grows too
// large to be one service (long chains of weak mappings), so that an
// index can return a tool's whole cluster as its alternatives.
package graph
