// Package progress reports the progress of long work: a progress bar when
// the output is a terminal, plain "desc: n/total" lines (at most one every
// few seconds, plus the last) when it is not, as in CI logs.
package progress
