// Package index is toolenv's index of tools for retrieval: every tool's
// name, description, parameters and output fields, searchable lexically
// (SQLite FTS5, BM25) and by vectors, with the mappings between tools so
// that retrieving one tool also returns its alternatives.
//
// An index is one SQLite file: the tools (as JSON), an FTS5 table with a
// column per part of the documentation plus one of canonical words
// (synonyms folded, package terms), the vectors, the mappings and the
// clusters. Build writes it to a temporary file and renames it into place,
// so a failed build never leaves half an index.
//
// Vectors come from an Embedder: the deterministic offline one
// (embed.Hash) when no endpoint is configured, or any OpenAI-compatible
// endpoint (embed.Remote). They are searched exactly with
// github.com/philippgille/chromem-go: an exhaustive, concurrent cosine
// scan, which at toolenv's scale (thousands to tens of thousands of
// tools) answers in milliseconds with recall 1 — an approximate index
// buys nothing here, and github.com/coder/hnsw v0.6.1, the HNSW module
// that installs, has a recall bug (recall@10 ≈ 0.17).
//
// Search fuses the lexical and vector rankings with reciprocal rank
// fusion. When the index has no vectors (the embeddings endpoint was down
// at build time), or the query cannot be embedded (down now, or another
// model than the index's), Search falls back to lexical results and says
// so in Results.Notes.
package index
