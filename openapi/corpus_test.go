package openapi

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/toolenv/toolenv/internal/npmtest"
	"github.com/toolenv/toolenv/internal/oaslint"
	"go.yaml.in/yaml/v3"
)

// docOperations counts the operations of a generated document's paths.
func docOperations(doc map[string]any) int {
	n := 0
	paths, _ := doc["paths"].(map[string]any)
	for _, item := range paths {
		for m := range item.(map[string]any) {
			switch m {
			case "get", "put", "post", "delete", "options", "head", "patch", "trace":
				n++
			}
		}
	}
	return n
}

// TestEveryDocumentSwaggerParserAcceptsLoads generates 567 Swagger 2.0
// documents (as many as APIs.guru's Swagger 2.0 set) and 200 OpenAPI
// 3.0/3.1 ones in the shapes published descriptions take (oasGen), some
// written as YAML, and has swagger-parser (@apidevtools/swagger-parser,
// what "valid" means for most tools) validate them: every document it
// accepts loads, with one tool per operation (one with no operation has
// nothing to serve, and is refused saying so). Before, a document with
// array-form items (a draft-04 tuple, which Swagger 2.0's schema allows)
// was refused whole.
func TestEveryDocumentSwaggerParserAcceptsLoads(t *testing.T) {
	tools := npmtest.Require(t)
	dir := t.TempDir()
	g := &oasGen{rng: rand.New(rand.NewPCG(29, 567))}
	var files []string
	docs := map[string]map[string]any{}
	for i := range 767 {
		v := "2.0"
		switch {
		case i >= 667:
			v = "3.1.0"
		case i >= 567:
			v = "3.0.3"
		}
		doc := g.document(v, i)
		var raw []byte
		var err error
		name := fmt.Sprintf("doc%03d.json", i)
		if i%5 == 4 {
			name = fmt.Sprintf("doc%03d.yaml", i)
			raw, err = yaml.Marshal(doc)
		} else {
			raw, err = json.MarshalIndent(doc, "", " ")
		}
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		docs[f] = doc
	}
	start := time.Now()
	refused, err := oaslint.SwaggerParser(context.Background(), tools, dir, files...)
	parsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	accepted, loaded, empty := 0, 0, 0
	byVersion := map[string][2]int{}
	reasons := map[string]int{}
	for _, f := range files {
		if msg, ok := refused[f]; ok {
			lines := strings.SplitN(msg, "\n", 3)
			reason := lines[0]
			if len(lines) > 1 {
				reason += " " + strings.TrimSpace(lines[1])
			}
			if len(reason) > 200 {
				reason = reason[:200]
			}
			reasons[reason]++
			continue
		}
		accepted++
		data, _ := os.ReadFile(f)
		v := fmt.Sprint(docs[f]["swagger"], docs[f]["openapi"])
		c, err := Read(context.Background(), data, LoadOptions{Name: strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))})
		if docOperations(docs[f]) == 0 {
			// Nothing to serve: refused, saying so (not counted as loaded).
			empty++
			if err == nil || !strings.Contains(err.Error(), "describes no operations") {
				t.Errorf("%s, a document without operations: %v", filepath.Base(f), err)
			}
			continue
		}
		counts := byVersion[v]
		counts[0]++
		if err != nil {
			t.Errorf("%s (%s), which swagger-parser accepts, is refused: %v", filepath.Base(f), v, err)
			byVersion[v] = counts
			continue
		}
		counts[1]++
		byVersion[v] = counts
		loaded++
		if want := docOperations(docs[f]); len(c.Tools) != want {
			t.Errorf("%s: %d tools of %d operations", filepath.Base(f), len(c.Tools), want)
		}
	}
	t.Logf("swagger-parser took %v, toolenv %v", parsed, time.Since(start)-parsed)
	t.Logf("swagger-parser accepts %d of %d documents; toolenv loads %d of the %d with operations (by version, accepted/loaded: %v)", accepted, len(files), loaded, accepted-empty, byVersion)
	if accepted < len(files)*3/4 {
		var rs []string
		for r, n := range reasons {
			rs = append(rs, fmt.Sprintf("%d× %s", n, r))
		}
		sort.Strings(rs)
		t.Errorf("the generator makes documents swagger-parser refuses (%d of %d): %s", len(files)-accepted, len(files), strings.Join(rs, "; "))
	}
}
