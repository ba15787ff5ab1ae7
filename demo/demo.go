package demo

import (
	"embed"
	"fmt"
	"io/fs"

	toolenv "github.com/toolenv/toolenv"
)

//go:embed collection
var files embed.FS

// Collection returns a fresh copy of the demo collection.
func Collection() (*toolenv.Collection, error) {
	c, err := toolenv.ReadCollectionFS(files, "collection")
	if err != nil {
		return nil, fmt.Errorf("demo collection: %w", err)
	}
	return c, nil
}

// Tasks returns the demo tasks.
func Tasks() ([]*toolenv.Task, error) {
	data, err := fs.ReadFile(files, "collection/"+toolenv.TasksFile)
	if err != nil {
		return nil, fmt.Errorf("demo tasks: %w", err)
	}
	return toolenv.ParseTasks(data, "demo/tasks.jsonl")
}

// FS returns the collection folder as a file system (collection.json,
// tools.json, tasks.jsonl), for writing it out.
func FS() fs.FS {
	sub, _ := fs.Sub(files, "collection")
	return sub
}
