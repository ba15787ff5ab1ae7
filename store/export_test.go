package store

// SetBulkWALFrames sets the bound of s's write-ahead log in bulk mode (a
// test fills it with a few batches).
func SetBulkWALFrames(s *SQLite, frames int) { s.bulkWALFrames = frames }
