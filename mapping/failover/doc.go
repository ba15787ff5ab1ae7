// Package failover re-routes a call whose backend failed — upstream down,
// rate-limited, timed out, unauthorised (a subscription limit) or gone
// (deprecated) — to a mapped alternative tool, with its arguments
// translated through the mapping and the answer translated back into the
// shape the caller expects.
//
// Alternatives are chosen by what was recorded of them: a Health keeps,
// per tool, the availability (an exponentially weighted success rate)
// and latency of every call the middleware saw, and a circuit that opens
// after consecutive failures, so that a tool known to be down is not
// tried first. Each alternative is ranked by
//
//	mapping score × availability² / (cost × (1 + latency in seconds))
//
// with the cost from the tool's Meta["cost"] (default 1). The result of a
// call answered by an alternative says so: a warning, and Meta
// failover_from, failover_to, failover_reason and failover_score.
package failover
