// Package embed turns tool documentation and queries into vectors for the
// tool index (package mapping/index).
//
// Hash is the deterministic offline embedder used when no embeddings
// endpoint is configured (no embedding model can be downloaded on the
// machines toolenv targets): signed feature hashing of normalised words,
// word bigrams and character trigrams into a fixed number of dimensions,
// TF log-scaled and L2-normalised. It is a lexical model — it knows the
// synonyms of package terms but nothing of meaning beyond them — and
// gives the same vector for the same text on every machine.
//
// Remote asks any OpenAI-compatible /v1/embeddings endpoint (vLLM, Ollama,
// llama.cpp, OpenAI) through package llm, in batches.
package embed
