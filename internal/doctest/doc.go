// Package doctest runs the shell blocks of Markdown documents as written,
// so that every command README.md and docs/*.md show is checked by the
// tests.
//
// The convention, for a document's author:
//
//   - A block fenced "```sh" is run. Blocks run per file, in order, each
//     in its own bash (-Eeuo pipefail) in a fresh folder laid out like the
//     checkout (a copy of its files, ../shared beside it), with toolenv on
//     PATH. Every command must exit 0. Variables exported and the folder
//     changed to carry over to the next block of the file, as in a
//     reader's terminal.
//   - "```sh exit=N" expects the block to end with exit code N;
//     "```sh timeout=5m" gives it a longer budget than the default;
//     "```sh illustrative" is not run (the text says why).
//   - A line ending in " &" (before any comment) starts a background
//     process. A toolenv serve or toolenv map review started so is
//     waited for until its /healthz answers (on --addr, or the address in
//     its --config file, or 127.0.0.1:8080 and 127.0.0.1:8088), and every
//     process a file started is stopped, and its ports freed, at the end
//     of the file. A foreground server, or a second server on an address
//     the file already holds, is an error.
//   - A loopback OpenAI-compatible model listens on
//     http://127.0.0.1:8000/v1 while a file runs (see docmodel).
//   - Every fence names its language ("text" for output a reader sees);
//     "bash", "shell" and "console" fences are refused, so that no
//     command escapes the test by its fence.
//   - A block may not leave files behind inside the checkout's folders
//     (a fuzz corpus entry under testdata/, a changed source file); new
//     files at the top (out/, runs/, a.db) are the reader's own.
//
// Where the system allows it (root, or unprivileged user namespaces), each
// file runs in a private network namespace of its own, so the fixed ports
// 8080 and 8000 never meet another process's; elsewhere the files run one
// at a time on the host's loopback and a busy port fails the file, saying
// which.
package doctest
