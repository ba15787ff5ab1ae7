package toolbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	toolenv "github.com/toolenv/toolenv"
)

// Query is one StableToolBench query: the user's request and the docs of
// the APIs offered for it.
type Query struct {
	Query        string      `json:"query"`
	QueryID      json.Number `json:"query_id"`
	APIList      []APIDoc    `json:"api_list"`
	RelevantAPIs [][]string  `json:"relevant APIs"`
}

// ToolFile is a ToolBench tool document (toolenv/tools/<Category>/<tool>.json).
type ToolFile struct {
	ToolName         string        `json:"tool_name"`
	StandardizedName string        `json:"standardized_name,omitempty"`
	Title            string        `json:"title,omitempty"`
	ToolDescription  string        `json:"tool_description"`
	Host             string        `json:"host,omitempty"`
	APIList          []ToolFileAPI `json:"api_list"`
}

// ToolFileAPI is one API of a ToolBench tool document.
type ToolFileAPI struct {
	Name               string          `json:"name"`
	URL                string          `json:"url"`
	Description        string          `json:"description"`
	Method             string          `json:"method"`
	RequiredParameters []ParamDoc      `json:"required_parameters"`
	OptionalParameters []ParamDoc      `json:"optional_parameters"`
	TemplateResponse   json.RawMessage `json:"template_response,omitempty"`
}

// Source is what Load read.
type Source struct {
	// Docs are every API documented, in the order read.
	Docs []APIDoc
	// Queries are the queries read, by group (the query file's name
	// without .json: "G1_instruction").
	Queries map[string][]Query
	// Files is how many files were read.
	Files int
}

// Load reads ToolBench-format documentation from each path: a
// StableToolBench query file (a JSON array of queries, whose api_list
// documents the APIs), a ToolBench tool file (a JSON object with an
// api_list; its category is its folder's name), or a folder holding either
// kind at any depth (the toolenv/tools/<Category>/<tool>.json layout among
// them).
func Load(paths ...string) (*Source, error) {
	files, err := docFiles(paths)
	if err != nil {
		return nil, err
	}
	// The files are read and decoded on every core (decoding is most of
	// loading a large set), then gathered in order.
	parsed := make([]parsedFile, len(files))
	eachFile(files, func(i int, buf *[]byte) {
		parsed[i] = parseFile(files[i], buf, false)
	})
	src := &Source{Queries: map[string][]Query{}}
	n := 0
	for _, pf := range parsed {
		if pf.err != nil {
			return nil, pf.err // the first failing file, in order
		}
		n += len(pf.docs)
	}
	src.Docs = make([]APIDoc, 0, n)
	for _, pf := range parsed {
		src.Files++
		if pf.group != "" {
			src.Queries[pf.group] = append(src.Queries[pf.group], pf.queries...)
		}
		src.Docs = append(src.Docs, pf.docs...)
	}
	return src, nil
}

// LoadCollection reads paths as Load does and returns what
// NewCollection(src.Docs, opts) would, with the Source (its Docs left
// nil: a large set's docs are not held). Each file is decoded and its
// tools built on the core that read it, while the file is at hand, so the
// decoded docs of a tool file are garbage at once (they point into the
// read buffer, which the next file reuses) rather than a copy of the
// whole set held until every file is read. Serving 50,000 APIs starts
// this way.
func LoadCollection(opts CollectionOptions, paths ...string) (*toolenv.Collection, *Source, error) {
	files, err := docFiles(paths)
	if err != nil {
		return nil, nil, err
	}
	type builtFile struct {
		tools   []*toolenv.Tool
		keys    []string
		group   string
		queries []Query
		err     error
	}
	out := make([]builtFile, len(files))
	// A builder per worker (eachFile runs one per core), which shares
	// what the tools it builds have in common; sized for ToolBench's
	// average of about 4 APIs a file.
	builders := make(chan *builder, runtime.GOMAXPROCS(0))
	eachFile(files, func(i int, buf *[]byte) {
		var b *builder
		select {
		case b = <-builders:
		default:
			b = newBuilder(4 * len(files) / cap(builders))
			b.validJSON = true // every doc is decoded from a file
			b.coll = opts.name()
		}
		defer func() { builders <- b }()
		pf := parseFile(files[i], buf, true)
		f := &out[i]
		f.group, f.queries, f.err = pf.group, pf.queries, pf.err
		// A tool file's docs point into *buf: what the builder keeps
		// of them it copies, and it must not compare them with the
		// previous file's (the buffer changed under those).
		b.last = lastTool{}
		f.tools, f.keys = make([]*toolenv.Tool, len(pf.docs)), make([]string, len(pf.docs))
		for j := range pf.docs {
			f.tools[j] = b.tool(&pf.docs[j])
			f.keys[j] = b.docKey
		}
	})
	src := &Source{Queries: map[string][]Query{}, Files: len(files)}
	n := 0
	for _, f := range out {
		if f.err != nil {
			return nil, nil, f.err // the first failing file, in order
		}
		n += len(f.tools)
	}
	tools, keys := make([]*toolenv.Tool, 0, n), make([]string, 0, n)
	seen := make(map[string]bool, n)
	for _, f := range out {
		if f.group != "" {
			src.Queries[f.group] = append(src.Queries[f.group], f.queries...)
		}
		for j, k := range f.keys {
			if !seen[k] { // docs of one API: the first one wins
				seen[k] = true
				tools, keys = append(tools, f.tools[j]), append(keys, k)
			}
		}
	}
	return finishCollection(opts, tools, keys), src, nil
}

// docFiles lists the files Load reads from paths: each file, and the
// .json files below each folder.
func docFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("load toolbench docs: %w", err)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		fs, err := jsonFiles(p)
		if err != nil {
			return nil, fmt.Errorf("load toolbench docs from %s: %w", p, err)
		}
		if len(fs) == 0 {
			return nil, fmt.Errorf("load toolbench docs: %s holds no .json files (want query files or the toolenv/tools/<Category>/<tool>.json layout)", p)
		}
		files = append(files, fs...)
	}
	return files, nil
}

// eachFile calls f(i, buf) for every file index on every core, each
// worker with its own read buffer, and returns when all calls have.
func eachFile(files []string, f func(i int, buf *[]byte)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Go(func() {
			var buf []byte // reused
			for {
				i := int(next.Add(1)) - 1
				if i >= len(files) {
					return
				}
				f(i, &buf)
			}
		})
	}
	wg.Wait()
}

// parsedFile is what one file holds.
type parsedFile struct {
	docs    []APIDoc
	group   string // a query file's group, its queries
	queries []Query
	err     error
}

// parseFile reads and decodes one file, reading it into *buf (grown as
// needed and kept for the next file). Nothing decoded refers to *buf
// unless zeroCopy is set, in which case the docs of a tool file may (its
// strings, numbers and raw values are not copied out): they are good only
// until *buf is used again. A query file's queries are always copies.
func parseFile(path string, buf *[]byte, zeroCopy bool) parsedFile {
	data, err := readFileInto(path, buf)
	if err != nil {
		return parsedFile{err: fmt.Errorf("load toolbench docs: %w", err)}
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	var out parsedFile
	switch {
	case len(trimmed) > 0 && trimmed[0] == '[':
		var qs []Query
		if err := decodeDoc(trimmed, &qs); err != nil {
			return parsedFile{err: fmt.Errorf("load toolbench docs: %s is not a StableToolBench query file: %w", path, err)}
		}
		out.group, out.queries = strings.TrimSuffix(filepath.Base(path), ".json"), qs
		for _, q := range qs {
			out.docs = append(out.docs, q.APIList...)
		}
	case len(trimmed) > 0 && trimmed[0] == '{':
		// The common shape is read without a general decoder (when its
		// strings may point into *buf); anything else by decodeDocBy.
		var tf ToolFile
		if !zeroCopy || !decodeToolFile(trimmed, &tf) {
			tf = ToolFile{} // what the fast reading left
			if _, err := decodeDocBy(trimmed, &tf, zeroCopy); err != nil {
				return parsedFile{err: fmt.Errorf("load toolbench docs: %s is not a ToolBench tool file: %w", path, err)}
			}
		}
		if tf.ToolName == "" {
			tf.ToolName = tf.Title
		}
		if tf.ToolName == "" || tf.APIList == nil {
			return parsedFile{err: fmt.Errorf("load toolbench docs: %s has no tool_name or no api_list: not a ToolBench tool file", path)}
		}
		category := filepath.Base(filepath.Dir(path))
		out.docs = make([]APIDoc, 0, len(tf.APIList))
		for _, a := range tf.APIList {
			out.docs = append(out.docs, APIDoc{
				CategoryName: category, ToolName: tf.ToolName, APIName: a.Name, APIDescription: a.Description,
				RequiredParameters: a.RequiredParameters, OptionalParameters: a.OptionalParameters,
				Method: a.Method, TemplateResponse: a.TemplateResponse, URL: a.URL,
				ToolDescription: tf.ToolDescription, Host: tf.Host,
			})
		}
	default:
		return parsedFile{err: fmt.Errorf("load toolbench docs: %s is neither a query file (JSON array) nor a tool file (JSON object)", path)}
	}
	return out
}

// readFileInto reads the file at path into *buf, which it grows as
// needed (and keeps grown: the next file likely fits), and returns the
// bytes read. It does not stat the file first: most files fit the
// buffer, and reading to the end is how the end is known anyway.
func readFileInto(path string, buf *[]byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if cap(*buf) == 0 {
		*buf = make([]byte, 0, 64<<10)
	}
	data := (*buf)[:0]
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // full: grow
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			*buf = data[:0]
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Tasks turns the queries into tasks over collection c (made from the
// same source by NewCollection). A task's ID is "<group>/<query_id>"; its
// Tools are the collection's names for the query's api_list; Meta holds
// the query_id and the relevant APIs as function names.
func (src *Source) Tasks(c *toolenv.Collection) []*toolenv.Task {
	if len(src.Queries) == 0 {
		return nil // a tree of tool files: no index to build
	}
	ix := NewIndex(c)
	groups := make([]string, 0, len(src.Queries))
	for g := range src.Queries {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	var tasks []*toolenv.Task
	for _, g := range groups {
		for _, q := range src.Queries[g] {
			t := &toolenv.Task{
				ID:         g + "/" + q.QueryID.String(),
				Collection: c.Name,
				Query:      q.Query,
				Source:     "stabletoolbench",
				Group:      g,
				Meta:       map[string]any{"query_id": q.QueryID},
			}
			byTitle := map[string]string{}
			for _, a := range q.APIList {
				tool, err := ix.Resolve(a.CategoryName, a.ToolName, a.APIName)
				if err != nil {
					continue
				}
				t.Tools = append(t.Tools, tool.Name)
				byTitle[a.ToolName+"\x00"+a.APIName] = tool.Name
			}
			var relevant []any
			for _, r := range q.RelevantAPIs {
				if len(r) == 2 {
					if n, ok := byTitle[r[0]+"\x00"+r[1]]; ok {
						relevant = append(relevant, n)
					}
				}
			}
			t.Meta["relevant_apis"] = relevant
			tasks = append(tasks, t)
		}
	}
	return tasks
}

// jsonFiles returns the .json files below dir, sorted.
func jsonFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".json") {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}
