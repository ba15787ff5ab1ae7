package toolbench

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	toolenv "github.com/toolenv/toolenv"
)

// CacheRecord is one entry of a StableToolBench response cache. The cache
// is a folder tree <category>/<tool>_for_<category>/<api>.json; each file
// maps str(tool_input) (a Python dict repr) to {"error", "response"}.
type CacheRecord struct {
	// Category, Tool and API are the standardized names the file's path
	// gives.
	Category, Tool, API string
	// Key is the entry's key as stored (Python repr).
	Key string
	// Args are the arguments the key stands for.
	Args map[string]any
	// Error and Response are the cached answer.
	Error    string
	Response json.RawMessage
	// File is the file the entry came from.
	File string
	// NonFinite says Response held NaN, Infinity or -Infinity (which
	// Python's json.dump writes and JSON cannot hold); they were read as
	// null.
	NonFinite bool
}

// FunctionName is ToolBench's function name for the record's API.
func (r *CacheRecord) FunctionName() string {
	return lastChars(r.API+"_for_"+r.Tool, 64)
}

// CacheProblem is an entry or file that could not be read; reading goes
// on without it.
type CacheProblem struct {
	File string `json:"file"`
	Key  string `json:"key,omitempty"`
	Err  string `json:"error"`
}

// ReadCache walks a StableToolBench cache folder and calls fn for every
// entry, in a deterministic order. A malformed file or key is reported in
// problems and skipped; an error from fn stops the walk.
func ReadCache(dir string, fn func(*CacheRecord) error) (files int, problems []CacheProblem, err error) {
	st, err := os.Stat(dir)
	if err != nil {
		return 0, nil, fmt.Errorf("read cache: %w", err)
	}
	if !st.IsDir() {
		return 0, nil, fmt.Errorf("read cache: %s is not a folder (want StableToolBench's <category>/<tool>_for_<category>/<api>.json layout)", dir)
	}
	paths, err := jsonFiles(dir)
	if err != nil {
		return 0, nil, fmt.Errorf("read cache %s: %w", dir, err)
	}
	for _, path := range paths {
		rel, _ := filepath.Rel(dir, path)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) != 3 {
			problems = append(problems, CacheProblem{File: path, Err: "not at <category>/<tool>_for_<category>/<api>.json"})
			continue
		}
		cat, toolDir, api := parts[0], parts[1], strings.TrimSuffix(parts[2], ".json")
		tool := strings.TrimSuffix(toolDir, "_for_"+cat)
		data, err := os.ReadFile(path)
		if err != nil {
			problems = append(problems, CacheProblem{File: path, Err: err.Error()})
			continue
		}
		entries, brokenKey, ferr := readCacheFile(data)
		if ferr != nil {
			if len(entries) == 0 && brokenKey == "" {
				problems = append(problems, CacheProblem{File: path, Err: ferr.Error()})
				continue
			}
			// The entries before the break are kept.
			problems = append(problems, CacheProblem{File: path, Key: brokenKey, Err: ferr.Error() + "; the entries before it were read"})
		}
		files++
		sort.Slice(entries, func(i, j int) bool { return entries[i].Key < entries[j].Key })
		for _, fe := range entries {
			k := fe.Key
			if fe.Err != nil {
				problems = append(problems, CacheProblem{File: path, Key: k, Err: fe.Err.Error()})
				continue
			}
			rec := &CacheRecord{Category: cat, Tool: tool, API: api, Key: k, File: path, NonFinite: fe.NonFinite}
			v, err := ParsePyLiteral(k)
			if err == nil {
				m, ok := v.(map[string]any)
				if !ok {
					err = errors.New("key is not a dict")
				}
				rec.Args = m
			}
			if err != nil {
				problems = append(problems, CacheProblem{File: path, Key: k, Err: err.Error()})
				continue
			}
			errText, resp, ok := entryValue(fe.Value)
			if !ok {
				problems = append(problems, CacheProblem{File: path, Key: k, Err: "value is not {\"error\", \"response\"}"})
				continue
			}
			rec.Error, rec.Response = errText, resp
			if err := fn(rec); err != nil {
				return files, problems, err
			}
		}
	}
	return files, problems, nil
}

// CachePath returns where StableToolBench's server looks for the cache
// entries of a /virtual request naming category, tool and api
// (prepare_tool_name_and_url in its server/main.py): the folder of the
// standardized category, the tool's folder (tool as sent when it already
// ends in "_for_<category>", else standardized with that suffix added),
// and the file named for the standardized API name cut at its first
// "_for_<tool>".
func CachePath(category, tool, api string) (catDir, toolDir, file string) {
	catDir = StandardizeCategory(category)
	a, _, _ := strings.Cut(APIName(api), "_for_"+tool)
	toolDir = tool
	if !strings.HasSuffix(tool, "_for_"+catDir) {
		toolDir = Standardize(tool) + "_for_" + catDir
	}
	return catDir, toolDir, a + ".json"
}

// WriteCache writes records in StableToolBench's layout under dir, one
// file per API, each in the file StableToolBench's server reads for a
// request naming the record's Category, Tool and API (CachePath). A
// record's key is its Key when it has one (the key exactly as recorded:
// StableToolBench finds an entry only under the client's own key order
// and value types), else the Python repr of its Args with the dict keys
// sorted. Files are written atomically.
//
// The folder and file names must each be one non-empty name, not "." or
// "..", without a separator: a record that breaks this is an error and
// nothing is written.
func WriteCache(dir string, recs []*CacheRecord) (files int, err error) {
	byFile := map[string]map[string]any{}
	for _, r := range recs {
		catDir, toolDir, file := CachePath(r.Category, r.Tool, r.API)
		for _, name := range []string{catDir, toolDir, strings.TrimSuffix(file, ".json")} {
			if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || !filepath.IsLocal(name) {
				return 0, fmt.Errorf("write cache: %s/%s/%s: %q cannot be a folder or file name in StableToolBench's layout (check the --toolbench docs' category, tool and API names)", r.Category, r.Tool, r.API, name)
			}
		}
		p := filepath.Join(dir, catDir, toolDir, file)
		if byFile[p] == nil {
			byFile[p] = map[string]any{}
		}
		resp := r.Response
		if len(resp) == 0 {
			resp = json.RawMessage(`""`)
		}
		key := r.Key
		if key == "" {
			key = PyRepr(r.Args)
		}
		byFile[p][key] = map[string]any{"error": r.Error, "response": resp}
	}
	paths := make([]string, 0, len(byFile))
	for p := range byFile {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return files, fmt.Errorf("write cache: %w", err)
		}
		if err := toolenv.WriteJSONFile(p, byFile[p]); err != nil {
			return files, fmt.Errorf("write cache: %w", err)
		}
		files++
	}
	return files, nil
}
