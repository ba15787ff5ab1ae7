package episode

// KeptRecordBytes returns the bytes of the ended episodes' records e
// keeps in memory (for tests).
func KeptRecordBytes(e *Env) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.kept
}
