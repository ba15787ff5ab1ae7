// Package cache moves recorded answers between toolenv's store and other
// formats: StableToolBench's response cache folders (Import,
// ExportStableToolBench) and JSON lines (ExportJSONL). toolenv cache runs
// it.
package cache
