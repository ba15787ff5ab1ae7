// Package doctest runs the shell blocks of Markdown documents as written,
// and checks the figures they document, so that every command and every
// number of README.md and docs/*.md is held to the truth by the tests
// (TestDocs; go test ./devtools/doctest -run 'TestDocs/pages/docs/eval.md'
// runs one page).
//
// # The convention, for a document's author
//
//   - A block fenced "```sh" is run. Blocks run per file, in order, each
//     in its own bash (-Eeuo pipefail) in a fresh folder laid out like the
//     checkout: a copy of its files (git's tracked and untracked ones, not
//     the ignored), with ../shared beside it, toolenv (built from the
//     checkout) first on PATH, and a home and TMPDIR of the file's own.
//     README.md is run as a reader pastes it into a new terminal: with no
//     toolenv on PATH (the folders of PATH that hold one are left out),
//     so its first block must install it. Every command must exit 0. Variables exported and the folder changed
//     carry over to the file's next block, as in a reader's terminal.
//   - "```sh exit=N" expects the block to end with exit code N;
//     "```sh timeout=20m" gives it a longer budget than DefaultTimeout (15m);
//     "```sh illustrative" is not run (the text beside it says why; keep
//     them rare: TestDocs allows maxIllustrative of them).
//   - A line ending in " &" (before any comment) starts a background
//     process. A toolenv serve or toolenv map review started so is waited
//     for until its /healthz answers (on --addr, else the addr of its
//     --config file, else 127.0.0.1:8080 or 127.0.0.1:8088); every process
//     a file started is stopped, and its ports freed, at the end of the
//     file. A server in the foreground, a second server on an address the
//     file already holds, and go test -fuzz without -fuzztime are errors
//     before anything runs.
//   - A loopback OpenAI-compatible model (the docmodel command, built on
//     llm/llmtest) listens on http://127.0.0.1:8000/v1 while a file runs.
//   - Every fence names its language ("text" for output a reader sees);
//     "bash", "shell" and "console" fences are refused, so that no
//     command escapes the test by its fence.
//   - A block may not change the checkout's files or leave new ones inside
//     its folders (a fuzz corpus entry under testdata/ breaks the next go
//     test); new files and folders at the top (out/, runs/, a.db) are the
//     reader's own.
//   - A figure is defined, in a comment block, by the page that runs the
//     command producing it, and shown anywhere between markers (see
//     FigureDef); once the file's blocks have passed, the figure is read
//     from the file they wrote and compared with every place it is shown.
//     go test ./devtools/doctest -run TestDocs -update writes fresh values.
//
// A failing block's report names the file and line of the failing command,
// the command, the exit code and the end of its output.
//
// # Where it runs
//
// Where the system allows it (root, or unprivileged user namespaces, with
// unshare, nsenter and ip), each file runs in a private network namespace,
// so the fixed ports 8080 and 8000 never meet another process's and files
// run side by side (TOOLENV_DOCTEST_PARALLEL at once, by default four
// per core and at least 8, the costliest first: pages wait on their
// servers and builds much of the time; go test -parallel N overrides),
// and the package's tests that run fixture pages run beside them rather
// than after; elsewhere they run one at a time on the host's
// loopback, serialised across processes by a lock file, and a busy port
// fails the file, saying which. The environment of the blocks is the
// test's without its TOOLENV_ variables (a reader starts without them),
// with HOME and TMPDIR of the file's own (the Go caches stay where they
// are, and GOFLAGS gains -trimpath, with which Go keys the packages it
// compiles by their content, not their folder: the README's go build of
// toolenv, in a folder of its own, finds them all in the build cache, as a
// reader's second build does) and DOCTEST_STATE, the harness's folder.
// TestDocs adds TOOLENV_IMAGE_CACHE, one empty folder that every page of
// the run shares, as a reader's cache folder is shared by the pages they
// run: each BIRD database is indexed once per run, not once per page.
// It adds TOOLENV_BUILD_CACHE the same way: the pages that run the same
// toolenv build bird (the same data and flags, from the same place
// relative to ../shared) make the build once per run and reuse it after,
// each reuse marked "reused build ..." in its output and report; pages
// that start the same build at once wait for the first.
//
// TestDocs ends its log with the heaviest blocks' CPU (the user and
// system time of each block's foreground commands; see CostTable), how
// long its set-up took (the checkout's copy, the wait for the package's
// sequential tests; the binaries build meanwhile, and each page waits
// only for those it needs) and a timeline of the pages: when each began
// and ended (see Timeline). On a loaded machine the timeline is what
// tells a page that waited for a slot or a binary from one whose own
// chain of blocks is the doc test's critical path.
//
// Variables of the test itself: TOOLENV_DOCTEST_NETWORK=host|private
// forces a network; TOOLENV_DOCTEST_KEEP=1 keeps a failing page's folder;
// TOOLENV_DOCTEST_COSTS=FILE writes every run block's CPU and wall time
// there, heaviest first, then the set-up's times and the timeline;
// TOOLENV_DOCTEST_BIN=DIR uses toolenv and toolenv-docmodel built
// beforehand (Build) instead of building them.
package doctest
