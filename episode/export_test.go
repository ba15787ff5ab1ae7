package episode

// KeptRecordBytes returns the bytes of the ended episodes' records e
// keeps in memory (for tests).
func KeptRecordBytes(e *Env) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.kept
}

// SetCallHook makes e tell f of each call a step makes, with its number
// in the step (for tests that cut a step between its calls).
func SetCallHook(e *Env, f func(n int)) { e.onCall = f }
