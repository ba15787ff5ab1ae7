// Package devtools holds no code of its own: its sub-packages are the
// programs that drive the whole of toolenv from outside (the benchmarks
// behind `toolenv bench`, the doc test, the load generator, the generator of
// ToolBench-format API sets). They sit on top of every other package and
// nothing in the library depends on them; the low-level helpers every
// package uses (redaction, configuration binding, Python formatting, test
// servers) live in internal/ instead.
package devtools
