package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/environment"
	"github.com/toolenv/toolenv/eval/answer"
	"github.com/toolenv/toolenv/internal/npmtest"
	"github.com/toolenv/toolenv/internal/oaslint"
	"github.com/toolenv/toolenv/internal/shareddata"
	"github.com/toolenv/toolenv/nl2api"
	"github.com/toolenv/toolenv/openai"
)

// The documents third-party tools read, checked with those tools: the
// served OpenAPI documents of the demo, the three BIRD flavors and the
// StableToolBench docs with Redocly and swagger-parser, and a TypeScript
// client generated from the SLOT document running tasks.

var birdBuild struct {
	once sync.Once
	dir  string
	err  error
}

// builtBIRD builds the BIRD collections from ../shared/data once per test
// binary (skipping where the data is absent) and returns the output
// folder.
func builtBIRD(t *testing.T) string {
	t.Helper()
	data := shareddata.Require(t, "bird")
	birdBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "toolenv-server-bird-")
		if err != nil {
			birdBuild.err = err
			return
		}
		birdBuild.dir = dir
		_, birdBuild.err = nl2api.Build(context.Background(), nl2api.Options{Data: data, Out: dir, ImageCache: imageCache})
	})
	if birdBuild.err != nil {
		t.Fatal(birdBuild.err)
	}
	return birdBuild.dir
}

// imageCache is the test binary's own image cache (rodb.DiskCache): the
// BIRD builds and the environments the tests open (serveEnv, and
// $TOOLENV_IMAGE_CACHE for the toolenv processes) index each database
// once per run rather than once per build and per environment, and
// nothing is read from or left in the user's cache folder.
var imageCache *rodb.DiskCache

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolenv-server-images-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(rodb.CacheEnv, dir)
	imageCache = &rodb.DiskCache{Dir: dir}
	code := m.Run()
	for _, dir := range []string{dir, birdBuild.dir, birdSlotSel.dir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

// serveEnv opens an environment over cfg and serves it on loopback.
func serveEnv(t *testing.T, cfg *environment.Config) string {
	t.Helper()
	if cfg.ImageCache == "" {
		cfg.ImageCache = imageCache.Dir
	}
	env, err := environment.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	h, err := env.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// fetch GETs url (with a bearer token when given) and returns the body of
// a 200.
func fetch(t *testing.T, url, token string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %.300s", url, resp.StatusCode, b)
	}
	return b
}

// TestServedOpenAPIDocumentsLintClean: the OpenAPI documents toolenv
// serve gives for the demo, the three BIRD flavors and the
// StableToolBench docs have no error under Redocly's recommended rules
// and none at all under examples/openapi/redocly.yaml (which turns off the two
// warnings it justifies), and swagger-parser validates them; so does the
// demo's document when the server asks for a token, which then declares
// its bearer scheme.
func TestServedOpenAPIDocumentsLintClean(t *testing.T) {
	tools := npmtest.Require(t)
	out := builtBIRD(t)
	docs := shareddata.Require(t, "stabletoolbench", "solvable_queries", "test_instruction")
	url := serveEnv(t, &environment.Config{Store: ":memory:", Demo: true, ToolBench: []string{docs},
		Collections: []string{filepath.Join(out, "slot"), filepath.Join(out, "sel"), filepath.Join(out, "rest")}})
	t.Setenv("TOOLENV_TEST_TOKEN", "a-token-of-thirty-two-characters")
	withToken := &environment.Config{Store: ":memory:"}
	withToken.Server.AuthTokenEnv = "TOOLENV_TEST_TOKEN"
	tokenURL := serveEnv(t, withToken)

	dir := t.TempDir()
	var files []string
	save := func(name string, body []byte) {
		f := filepath.Join(dir, name+".json")
		if err := os.WriteFile(f, body, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	for _, c := range []string{"demo", "bird-slot", "bird-sel", "bird-rest", "toolbench"} {
		save(c, fetch(t, url+"/collections/"+c+"/openapi.json", ""))
	}
	secured := fetch(t, tokenURL+"/collections/demo/openapi.json", "a-token-of-thirty-two-characters")
	var doc struct {
		Security   []map[string][]string `json:"security"`
		Components struct {
			SecuritySchemes map[string]struct{ Type, Scheme string } `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(secured, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Security) != 1 || doc.Components.SecuritySchemes["bearerAuth"].Scheme != "bearer" {
		t.Errorf("a server asking for a token documents security %v, schemes %v", doc.Security, doc.Components.SecuritySchemes)
	}
	save("demo-token", secured)

	ctx := context.Background()
	rep, err := oaslint.Redocly(ctx, tools, []string{"--extends", "recommended"}, files...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Redocly's recommended rules over %d documents:\n%s", len(files), rep.Summary())
	for i, p := range rep.Errors() {
		if i < 20 {
			t.Errorf("%s", p)
		}
	}
	config, err := filepath.Abs(filepath.Join("..", "examples", "openapi", "redocly.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err = oaslint.Redocly(ctx, tools, []string{"--config", config}, files...)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range rep.Problems {
		if i < 20 {
			t.Errorf("with examples/openapi/redocly.yaml: %s", p)
		}
	}
	failed, err := oaslint.SwaggerParser(ctx, tools, dir, files...)
	if err != nil {
		t.Fatal(err)
	}
	for f, msg := range failed {
		line, _, _ := strings.Cut(msg, "\n")
		t.Errorf("swagger-parser: %s: %s", filepath.Base(f), line)
	}
}

// TestGeneratedTypeScriptClientRunsSLOTTasks generates a typed client
// from the served SLOT document with openapi-typescript, writes a
// program that runs SLOT tasks through it with openapi-fetch (POST
// /sessions, the initialisation calls, the gold calls, DELETE
// /sessions/{id}: each call a literal the compiler checks against the
// generated types), compiles it with tsc --strict and runs it with Node
// 22; each task's answer, built from the results of its answer labels,
// must equal its verified gold answer.
func TestGeneratedTypeScriptClientRunsSLOTTasks(t *testing.T) {
	tools := npmtest.Require(t)
	out := builtBIRD(t)
	for _, flavor := range []string{"slot", "sel"} {
		t.Run(flavor, func(t *testing.T) {
			// The two flavors share only the built collections; each
			// waits mostly on its own tsc and Node.
			t.Parallel()
			url := serveEnv(t, &environment.Config{Store: ":memory:", Collections: []string{filepath.Join(out, flavor)}})
			tasks, _, err := toolenv.ReadTasks(filepath.Join(out, flavor, "tasks.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if len(tasks) == 0 {
				t.Fatal("no tasks")
			}
			if flavor == "sel" {
				// SEL's 155 tools make a large client to type-check:
				// every fourth task (each database and tool kind is
				// among them) keeps the test's time in bounds.
				var some []*toolenv.Task
				for i := 0; i < len(tasks); i += 4 {
					some = append(some, tasks[i])
				}
				tasks = some
			}
			coll := "bird-" + flavor
			dir := tools.ScriptDir(t)
			write := func(name, text string) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("openapi.json", string(fetch(t, url+"/collections/"+coll+"/openapi.json", "")))
			write("package.json", `{"type": "module"}`)
			// skipLibCheck: the declaration files (the DOM library,
			// openapi-fetch's own types) are not what is under test and
			// checking them was 40 % of tsc's type instantiations; main.ts
			// and the generated schema.ts are still checked in full.
			write("tsconfig.json", `{"compilerOptions": {"strict": true, "skipLibCheck": true, "target": "es2022", "module": "nodenext", "moduleResolution": "nodenext", "outDir": "out", "noEmitOnError": true, "lib": ["es2022", "dom"]}, "files": ["main.ts"]}`)
			ctx := context.Background()
			cmd := tools.Command(ctx, "openapi-typescript", "openapi.json", "--output", "schema.ts")
			cmd.Dir = dir
			if _, err := npmtest.Run(cmd); err != nil {
				t.Fatal(err)
			}
			src, err := clientProgram(coll, tasks)
			if err != nil {
				t.Fatal(err)
			}
			write("main.ts", src)
			cmd = tools.Command(ctx, "tsc", "--strict", "-p", "tsconfig.json")
			cmd.Dir = dir
			if _, err := npmtest.Run(cmd); err != nil {
				t.Fatalf("the program does not compile against the generated client: %v", err)
			}
			res, err := npmtest.Run(tools.Script(ctx, filepath.Join(dir, "out", "main.js"), url))
			if err != nil {
				t.Fatal(err)
			}
			var results map[string]map[string]json.RawMessage
			if err := json.Unmarshal(res, &results); err != nil {
				t.Fatalf("the program's output is not its results: %v\n%.2000s", err, res)
			}
			passed := 0
			for _, task := range tasks {
				var labeled []answer.Labeled
				for label, body := range results[task.ID] {
					labeled = append(labeled, answer.Labeled{Label: label, Body: body, OK: true})
				}
				sort.Slice(labeled, func(i, j int) bool { return labeled[i].Label < labeled[j].Label })
				gold, _, err := answer.Gold(task)
				if err != nil {
					t.Fatalf("%s: %v", task.ID, err)
				}
				got, err := answer.FromResults(task, labeled)
				if err != nil {
					t.Errorf("%s: %v", task.ID, err)
					continue
				}
				if ok, why := answer.Equal(gold, got, answer.Options{Ordered: answer.Ordered(task)}); !ok {
					t.Errorf("%s: the answer differs from the gold answer: %s", task.ID, why)
					continue
				}
				passed++
			}
			t.Logf("%s: %d/%d tasks answered as their gold answer through the generated TypeScript client", coll, passed, len(tasks))
		})
	}
}

// clientProgram writes the TypeScript program that runs tasks through the
// generated client: one function per task, each call a literal.
func clientProgram(coll string, tasks []*toolenv.Task) (string, error) {
	var b strings.Builder
	b.WriteString(`import createClient from "openapi-fetch";
import type { paths } from "./schema.js";

declare const process: { argv: string[]; exitCode: number };
const client = createClient<paths>({ baseUrl: process.argv[2] });

async function openSession(): Promise<string> {
  const { data, error } = await client.POST("/sessions", { body: {} });
  if (error !== undefined || data === undefined) throw new Error("POST /sessions: " + JSON.stringify(error));
  return data.session;
}

async function endSession(id: string): Promise<void> {
  const { error } = await client.DELETE("/sessions/{id}", { params: { path: { id } } });
  if (error !== undefined) throw new Error("DELETE /sessions: " + JSON.stringify(error));
}

function check(task: string, step: string, error: { status: string; error: string } | undefined): void {
  if (error !== undefined) throw new Error(task + ": " + step + ": " + error.status + ": " + error.error);
}

const results: Record<string, Record<string, unknown>> = {};

// ToolBody is the JSON request body the generated types give a tool's
// POST; each call's literal is checked against it.
type ToolBody<P extends keyof paths> = paths[P]["post"] extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;
`)
	// Each tool gets one function calling client.POST on its path: tsc
	// resolves openapi-fetch's generic POST once per tool rather than once
	// per call (most of its time checking the program went there), and
	// each call's body is still a literal checked against the generated
	// body type.
	var funcs strings.Builder
	toolFunc := map[string]string{}
	for i, task := range tasks {
		init, err := sqltools.InitCalls(task)
		if err != nil {
			return "", fmt.Errorf("%s: %w", task.ID, err)
		}
		fmt.Fprintf(&b, "\nasync function task%d(): Promise<void> {\n  const session = await openSession();\n  const header = { %q: session };\n  const out: Record<string, unknown> = {};\n", i, "X-Toolenv-Session")
		calls := append(append([]toolenv.GoldCall(nil), init...), task.Gold...)
		for j, g := range calls {
			args := map[string]any{}
			for k, v := range g.Args {
				args[k] = v
			}
			if g.Label != "" {
				args["label"] = g.Label
			}
			body, err := json.Marshal(args)
			if err != nil {
				return "", err
			}
			path := "/tools/" + coll + "/" + g.Name
			fn, ok := toolFunc[path]
			if !ok {
				fn = fmt.Sprintf("call%d", len(toolFunc))
				toolFunc[path] = fn
				fmt.Fprintf(&funcs, "\nasync function %s(header: { %q: string }, body: ToolBody<%q>) {\n  return client.POST(%q, { params: { header }, body });\n}\n", fn, "X-Toolenv-Session", path, path)
			}
			fmt.Fprintf(&b, "  {\n    const { data, error } = await %s(header, %s);\n    check(%q, %q, error);\n",
				fn, body, task.ID, fmt.Sprintf("call %d (%s)", j+1, g.Name))
			if g.Label != "" {
				fmt.Fprintf(&b, "    out[%q] = data;\n", g.Label)
			}
			b.WriteString("  }\n")
		}
		fmt.Fprintf(&b, "  await endSession(session);\n  results[%q] = out;\n}\n", task.ID)
	}
	b.WriteString(funcs.String())
	b.WriteString("\nasync function main(): Promise<void> {\n")
	for i := range tasks {
		fmt.Fprintf(&b, "  await task%d();\n", i)
	}
	b.WriteString("  console.log(JSON.stringify(results));\n}\n\nmain().catch((e: unknown) => { console.error(e); process.exitCode = 1; });\n")
	return b.String(), nil
}

// TestServedStrictListings: the strict OpenAI listings of the demo, the
// three BIRD flavors and the StableToolBench docs pass OpenAI's strict-
// mode rules for every tool listed strict, and each tool listed without
// strict has a note saying why; GET /functions over all of them gives
// unique names (SLOT's and SEL's group_data_by prefixed).
func TestServedStrictListings(t *testing.T) {
	out := builtBIRD(t)
	docs := shareddata.Require(t, "stabletoolbench", "solvable_queries", "test_instruction")
	url := serveEnv(t, &environment.Config{Store: ":memory:", Demo: true, ToolBench: []string{docs},
		Collections: []string{filepath.Join(out, "slot"), filepath.Join(out, "sel"), filepath.Join(out, "rest")}})
	total, strict := 0, 0
	for _, c := range []string{"demo", "bird-slot", "bird-sel", "bird-rest", "toolbench"} {
		req, _ := http.NewRequest(http.MethodGet, url+"/collections/"+c+"/tools?format=openai&strict=true&limit=all", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var tools []openai.Tool
		err = json.NewDecoder(resp.Body).Decode(&tools)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tool := range tools {
			if !tool.Function.Strict {
				continue
			}
			n++
			if errs := openai.CheckStrictTool(tool); len(errs) > 0 {
				t.Errorf("%s: %v", c, errs)
			}
		}
		notes := resp.Header.Values("X-Toolenv-Note")
		without := 0
		for _, note := range notes {
			if strings.Contains(note, "listed without strict: ") {
				without++
			}
		}
		if resp.Header.Get("X-Toolenv-Not-Strict") != fmt.Sprint(len(tools)-n) || len(notes) < 200 && without != len(tools)-n {
			t.Errorf("%s: %d tools not strict, header says %s with %d notes of them", c, len(tools)-n, resp.Header.Get("X-Toolenv-Not-Strict"), without)
		}
		narrowed := len(notes) - without
		t.Logf("%s: %d of %d tools strict, %d of them narrowed; first notes: %.300s", c, n, len(tools), narrowed, strings.Join(notes, " | "))
		total += len(tools)
		strict += n
	}
	t.Logf("all: %d of %d tools strict", strict, total)
	var fns []openai.Tool
	if err := json.Unmarshal(fetch(t, url+"/functions?limit=all", ""), &fns); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range fns {
		if seen[f.Function.Name] {
			t.Errorf("/functions names %q twice", f.Function.Name)
		}
		seen[f.Function.Name] = true
	}
	if len(fns) != total || !seen["bird-slot__group_data_by"] || !seen["bird-sel__group_data_by"] || seen["group_data_by"] {
		t.Errorf("/functions lists %d tools (want %d); group_data_by of SLOT and SEL: %v %v", len(fns), total, seen["bird-slot__group_data_by"], seen["bird-sel__group_data_by"])
	}
}
