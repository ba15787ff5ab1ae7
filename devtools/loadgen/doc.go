// Package loadgen is a closed-loop HTTP load generator: a fixed number of
// connections, each sending requests back to back for a duration, with
// throughput and latency percentiles.
package loadgen
