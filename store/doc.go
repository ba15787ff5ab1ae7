// Package store keeps toolenv's persistent state in one embedded SQLite
// database: the response cache (tool ID + canonical arguments → response)
// and the records of every LLM request and response (for replay).
//
// The database runs in WAL mode with synchronous=NORMAL: any number of
// goroutines and processes may read and write it at once, and a process
// killed with SIGKILL loses no committed entry and never corrupts the file.
// A sharded in-memory LRU in front of the cache serves hot entries without
// touching SQLite.
package store
