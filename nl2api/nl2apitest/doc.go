// Package nl2apitest generates adversarial NL2SQL corpora in BIRD's layout
// for tests: seeded, deterministic SQLite databases whose table and column
// names are SQL keywords, toolenv's own protocol field names (label,
// session, tool, ...), Unicode and names that collide once made ASCII;
// values holding '#', '+', '%', '&', quotes, empty strings and NULLs;
// an index on every column (so SQLite scans every column in its own
// order); a WITHOUT ROWID table and a column called rowid; an optional
// table over the serving row cap; description CSVs in UTF-8, Windows-1252
// and UTF-8 that went through a Latin-1 mis-decoding; and questions with
// gold SQL over every shape the builder claims to cover (and some it must
// reject cleanly), each saying which flavors must keep it.
//
// Generate writes dev.json, dev_databases/<db>/<db>.sqlite and
// dev_databases/<db>/database_description/<table>.csv under a folder, so
// that nl2api.Build and `toolenv build bird --data DIR` read it like BIRD.
package nl2apitest
