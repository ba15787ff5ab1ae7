package toolenv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Collection is a named set of tools and the backend that executes them.
//
// On disk a collection is a folder (see ReadCollection): collection.json
// (this struct), tools.json (the tools) and, when it has any, tasks.jsonl.
// Other files (openapi.json, functions.json, a drift manifest, a build
// report) are derived views that their own packages write beside them.
type Collection struct {
	// Name is unique across a server; it is the first part of tool IDs.
	Name string `json:"name"`
	// Kind says what built the collection: "demo", "toolbench",
	// "openapi", "nl2sql-slot", "nl2sql-sel", "nl2sql-rest".
	Kind string `json:"kind"`
	// Version is the collection's version ("v1"; drift makes "v2").
	Version string `json:"version,omitempty"`
	// Description says what the collection holds.
	Description string `json:"description,omitempty"`
	// Policy says how strictly calls are checked and whether results
	// are cached.
	Policy Policy `json:"policy"`
	// Backend says which backend executes the tools and how it is
	// configured.
	Backend BackendSpec `json:"backend"`
	// Meta holds kind-specific details (database, source files, drift
	// lineage).
	Meta map[string]string `json:"meta,omitempty"`

	// Tools are the collection's tools (tools.json on disk).
	Tools []*Tool `json:"-"`
	// Dir is the folder the collection was read from, if any; relative
	// paths in Backend.Config are relative to it.
	Dir string `json:"-"`

	byName map[string]*Tool
}

// Policy is how the pipeline treats calls to a collection.
type Policy struct {
	// Validation is "strict" (exact schemas: unknown or mistyped
	// arguments are rejected) or "lenient" (ToolBench-style loose docs:
	// "5" is coerced to a number, unknown arguments pass through).
	Validation string `json:"validation,omitempty"`
	// Cache says whether successful results are cached and served from
	// the cache.
	Cache bool `json:"cache,omitempty"`
	// Feedback is how much a rejected call is told: "none", "terse" or
	// "helpful" (default).
	Feedback string `json:"feedback,omitempty"`
	// Mode is "strict" (calls must match this version's schema) or
	// "compat" (calls written against an older version are translated,
	// with a deprecation warning). Only drifted collections use it.
	Mode string `json:"mode,omitempty"`
	// Sessions says the backend keeps per-session state (SLOT/SEL).
	Sessions bool `json:"sessions,omitempty"`
}

// The validation policies.
const (
	ValidationStrict  = "strict"
	ValidationLenient = "lenient"
)

// The feedback levels for rejected calls.
const (
	FeedbackNone    = "none"
	FeedbackTerse   = "terse"
	FeedbackHelpful = "helpful"
)

// BackendSpec names a backend and carries its configuration.
type BackendSpec struct {
	// Type is the backend: "virtual" (cache → upstream → simulator),
	// "sqltools" (SLOT/SEL), "sqlrest" (REST over SQL), or another
	// registered type.
	Type string `json:"type"`
	// Config is the backend's own configuration.
	Config json.RawMessage `json:"config,omitempty"`
}

// NewCollection returns a collection holding tools, with its name index
// built. It fills each tool's Collection and ID.
func NewCollection(name, kind string, tools []*Tool) *Collection {
	c := &Collection{Name: name, Kind: kind, Tools: tools}
	c.Reindex()
	return c
}

// Reindex sets every tool's Collection and ID from c.Name and rebuilds the
// name index. Call it after changing Tools or Name.
func (c *Collection) Reindex() {
	if c.indexed() {
		return // as it would be rebuilt: 50,000 lookups cost less than 50,000 inserts
	}
	c.byName = make(map[string]*Tool, len(c.Tools))
	for _, t := range c.Tools {
		t.Collection = c.Name
		if !isToolID(t.ID, c.Name, t.Name) { // set already when indexed before: no new string
			t.ID = ToolID(c.Name, t.Name)
		}
		c.byName[t.Name] = t
	}
}

// indexed reports whether the name index is what Reindex would make:
// every tool indexed under its name, once, with its Collection and ID set
// (so the names are unique).
func (c *Collection) indexed() bool {
	if c.byName == nil || len(c.byName) != len(c.Tools) {
		return false
	}
	for _, t := range c.Tools {
		if t == nil || c.byName[t.Name] != t || t.Collection != c.Name || !isToolID(t.ID, c.Name, t.Name) {
			return false
		}
	}
	return true
}

// isToolID reports whether id is ToolID(collection, name).
func isToolID(id, collection, name string) bool {
	return len(id) == len(collection)+1+len(name) && id[len(collection)] == '/' &&
		id[:len(collection)] == collection && id[len(collection)+1:] == name
}

// Tool returns the tool with the given name, or nil.
func (c *Collection) Tool(name string) *Tool {
	if c.byName == nil { // not indexed yet: never mutate on a read path
		for _, t := range c.Tools {
			if t.Name == name {
				return t
			}
		}
		return nil
	}
	return c.byName[name]
}

// Validate checks the collection is well-formed: a name, unique tool
// names, and an object input schema on every tool.
func (c *Collection) Validate() error {
	if c.Name == "" {
		return errors.New("collection has no name")
	}
	var seen map[string]bool // names met; an indexed collection's are unique already
	if !c.indexed() {
		seen = make(map[string]bool, len(c.Tools))
	}
	var errs []error
	for i, t := range c.Tools {
		switch {
		case t == nil:
			errs = append(errs, fmt.Errorf("tool %d is null", i))
			continue
		case t.Name == "":
			errs = append(errs, fmt.Errorf("tool %d has no name", i))
		case seen[t.Name]:
			errs = append(errs, fmt.Errorf("tool name %q is used twice", t.Name))
		case t.Input != nil && t.Input.Type != "" && t.Input.Type != "object":
			errs = append(errs, fmt.Errorf("tool %q: input schema must be an object, not %q", t.Name, t.Input.Type))
		}
		if seen != nil {
			seen[t.Name] = true
		}
	}
	if err := CheckSchemas(c.Tools); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// CheckSchemas checks that no tool's input or output schema nests deeper
// than MaxSchemaDepth or contains itself; the error names the first such
// tool. A schema shared by many tools (ToolBench's loader shares equal
// parameters and inputs) is measured once per core: a large list is
// split among the cores (the walk waits on memory more than it computes).
func CheckSchemas(tools []*Tool) error {
	parts := min(runtime.GOMAXPROCS(0), max(1, len(tools)/4096))
	if parts == 1 {
		return checkSchemas(tools)
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for w := range parts {
		lo, hi := w*len(tools)/parts, (w+1)*len(tools)/parts
		wg.Go(func() { errs[w] = checkSchemas(tools[lo:hi]) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err // the first part's: the first tool's
		}
	}
	return nil
}

func checkSchemas(tools []*Tool) error {
	d := newDepthWalk()
	for _, t := range tools {
		if t == nil {
			continue
		}
		if err := d.check(t.Input); err != nil {
			return fmt.Errorf("tool %q: input schema: %w", t.Name, err)
		}
		if err := d.check(t.Output); err != nil {
			return fmt.Errorf("tool %q: output schema: %w", t.Name, err)
		}
	}
	return nil
}

// The files of a collection folder.
const (
	CollectionFile = "collection.json"
	ToolsFile      = "tools.json"
	TasksFile      = "tasks.jsonl"
)

// ReadCollection reads the collection in dir: collection.json and
// tools.json. Tasks are read separately with ReadTasks.
//
// A folder with no collection.json is a StatusNotFound error; when its
// subfolders are collections (the root of a build, such as out/bird), the
// error's hint names them.
func ReadCollection(dir string) (*Collection, error) {
	c, err := ReadCollectionFS(os.DirFS(dir), ".")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == CollectionFile && errors.Is(err, fs.ErrNotExist) {
			return nil, notACollection(dir, err)
		}
		return nil, fmt.Errorf("read collection %s: %w", dir, err)
	}
	c.Dir = dir
	return c, nil
}

// notACollection is the error of a folder without collection.json: it
// names the collections inside it when there are some, else says what a
// collection folder holds.
func notACollection(dir string, err error) error {
	// (The build-root case drops err: "open collection.json: no such
	// file" says less than the hint.)
	if _, serr := os.Stat(dir); serr != nil {
		return &Error{Status: StatusNotFound, Message: "read collection " + dir, Err: serr,
			Hint: "give the folder of a collection (collection.json, tools.json), such as a flavor written by toolenv build"}
	}
	if inside := CollectionsIn(dir); len(inside) > 0 {
		return &Error{Status: StatusNotFound,
			Message: fmt.Sprintf("read collection %s: it holds no %s: it is a folder of %d collections", dir, CollectionFile, len(inside)),
			Hint:    "name one of them: " + strings.Join(inside, ", ")}
	}
	return &Error{Status: StatusNotFound, Message: "read collection " + dir, Err: err,
		Hint: "a collection folder holds collection.json and tools.json, as toolenv build, toolenv drift and toolenv map write them"}
}

// CollectionsIn returns the subfolders of dir that are collection folders
// (they hold collection.json), by name: the flavors of a build root
// (out/bird/rest, out/bird/sel, out/bird/slot, ...). It is nil when dir
// cannot be read or holds none.
func CollectionsIn(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if st, err := os.Stat(filepath.Join(sub, CollectionFile)); err == nil && st.Mode().IsRegular() {
			out = append(out, sub)
		}
	}
	return out
}

// ReadCollectionFS reads the collection in folder dir of fsys (an
// embedded collection, for one).
func ReadCollectionFS(fsys fs.FS, dir string) (*Collection, error) {
	var c Collection
	read := func(name string, v any) error {
		data, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			return err
		}
		if err := DecodeJSON(data, v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	if err := read(CollectionFile, &c); err != nil {
		return nil, err
	}
	if err := read(ToolsFile, &c.Tools); err != nil {
		if errors.Is(err, ErrSchemaTooDeep) {
			return nil, fmt.Errorf("%s: %w", ToolsFile, deepTool(fsys, path.Join(dir, ToolsFile)))
		}
		return nil, err
	}
	if err := CheckSchemas(c.Tools); err != nil {
		return nil, fmt.Errorf("%s: %w", ToolsFile, err)
	}
	for _, t := range c.Tools {
		// tools.json is indented for people; responses are served as
		// written here, so keep them compact.
		t.OutputExample = compactJSON(t.OutputExample)
		for i := range t.Examples {
			t.Examples[i].Response = compactJSON(t.Examples[i].Response)
		}
	}
	c.Reindex()
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("collection %s: %w", dir, err)
	}
	return &c, nil
}

// WriteCollection writes collection.json and tools.json into dir,
// creating it. Output is deterministic: the same collection gives the same
// bytes.
func WriteCollection(dir string, c *Collection) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("write collection: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write collection: %w", err)
	}
	if err := WriteJSONFile(filepath.Join(dir, CollectionFile), c); err != nil {
		return fmt.Errorf("write collection: %w", err)
	}
	tools := c.Tools
	if tools == nil {
		tools = []*Tool{}
	}
	if err := WriteJSONFile(filepath.Join(dir, ToolsFile), tools); err != nil {
		return fmt.Errorf("write collection: %w", err)
	}
	return nil
}

// SortTools orders tools by name, for deterministic output.
func SortTools(tools []*Tool) {
	sort.SliceStable(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
}

// WriteJSONFile writes v as indented JSON (no HTML escaping) to path,
// through a temporary file and a rename so a crash never leaves half a
// file.
func WriteJSONFile(path string, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return WriteFileAtomic(path, b.Bytes())
}

// WriteFileAtomic writes data to path through a temporary file in the same
// folder and a rename. The file gets the mode os.WriteFile(path, data,
// 0o644) would give it.
func WriteFileAtomic(path string, data []byte) error {
	f, err := createTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// createTemp is os.CreateTemp with mode 0o644 (under the umask) instead
// of 0o600, since the file is renamed into place for others to read.
func createTemp(dir, prefix string) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+strconv.FormatUint(uint64(rand.Uint32()), 10))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return f, err
	}
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// DecodeJSON decodes data into v with numbers kept as json.Number, and
// rejects trailing data.
func DecodeJSON(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("unexpected data after the JSON value")
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// ReadTasks reads a JSONL task file. A line that does not parse is
// skipped and reported in the returned problems (with its line number),
// so one broken line never loses the others.
func ReadTasks(path string) (tasks []*Task, problems []error, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read tasks: %w", err)
	}
	defer f.Close()
	tasks, problems, err = readTasks(f, path)
	if err != nil {
		return tasks, problems, err
	}
	// A task's initial state names files relative to the task file.
	kept := tasks[:0]
	for _, t := range tasks {
		if err := t.Initial.Resolve(filepath.Dir(path)); err != nil {
			problems = append(problems, fmt.Errorf("%s: task %s: %w", path, t.ID, err))
			continue
		}
		kept = append(kept, t)
	}
	return kept, problems, nil
}

// ParseTasks parses JSONL task data that must be well-formed: any broken
// line is an error naming it.
func ParseTasks(data []byte, name string) ([]*Task, error) {
	tasks, problems, err := readTasks(bytes.NewReader(data), name)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return tasks, nil
}

func readTasks(r io.Reader, path string) (tasks []*Task, problems []error, err error) {
	tasks, problems, err = ReadJSONLines[Task](r, path, "a task", 64<<20, nil)
	if err != nil {
		return tasks, problems, fmt.Errorf("read tasks %s: %w", path, err)
	}
	return tasks, problems, nil
}

// WriteTasks writes tasks as JSONL (one compact object per line) to path,
// atomically.
func WriteTasks(path string, tasks []*Task) error {
	var b bytes.Buffer
	if err := EncodeTasks(&b, tasks); err != nil {
		return err
	}
	return WriteFileAtomic(path, b.Bytes())
}

// EncodeTasks writes tasks as JSONL (one compact object per line) to w.
func EncodeTasks(w io.Writer, tasks []*Task) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, t := range tasks {
		if err := enc.Encode(t); err != nil {
			return fmt.Errorf("write tasks: task %s: %w", t.ID, err)
		}
	}
	return nil
}

// deepTool names the tool of a tools.json whose schema is too deep to
// decode.
func deepTool(fsys fs.FS, name string) error {
	data, _ := fs.ReadFile(fsys, name)
	var tools []struct {
		Name   string          `json:"name"`
		Input  json.RawMessage `json:"input"`
		Output json.RawMessage `json:"output"`
	}
	if json.Unmarshal(data, &tools) == nil {
		for _, t := range tools {
			switch {
			case jsonDepth(t.Input) > maxSchemaJSONDepth:
				return fmt.Errorf("tool %q: input schema: %w", t.Name, ErrSchemaTooDeep)
			case jsonDepth(t.Output) > maxSchemaJSONDepth:
				return fmt.Errorf("tool %q: output schema: %w", t.Name, ErrSchemaTooDeep)
			}
		}
	}
	return ErrSchemaTooDeep
}
