package toolbench

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/shareddata"
)

func queryDir(tb testing.TB) string {
	return shareddata.Require(tb, "stabletoolbench", "solvable_queries", "test_instruction")
}

func TestLoadStableToolBenchQueries(t *testing.T) {
	src, err := Load(queryDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if src.Files != 4 || len(src.Queries) != 4 {
		t.Fatalf("files=%d groups=%d", src.Files, len(src.Queries))
	}
	c := NewCollection(src.Docs, CollectionOptions{})
	if len(c.Tools) != 1920 {
		t.Fatalf("tools = %d, want the 1,920 distinct APIs", len(c.Tools))
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(c)
	// Every API resolves the way an unmodified StableToolBench client asks
	// for it: category_name, standardized tool name, pure API name.
	for _, d := range src.Docs {
		tool, err := ix.Resolve(d.CategoryName, Standardize(d.ToolName), APIName(d.APIName))
		if err != nil {
			t.Fatalf("%s/%s/%s: %v", d.CategoryName, d.ToolName, d.APIName, err)
		}
		if tool.Title != d.APIName || tool.Group != d.ToolName {
			t.Fatalf("%s/%s resolved to %s/%s", d.ToolName, d.APIName, tool.Group, tool.Title)
		}
	}
	tasks := src.Tasks(c)
	if len(tasks) != 598 {
		t.Fatalf("tasks = %d", len(tasks))
	}
	for _, task := range tasks {
		if len(task.Tools) == 0 || task.Query == "" {
			t.Fatalf("task %s has no tools or query", task.ID)
		}
		for _, n := range task.Tools {
			if c.Tool(n) == nil {
				t.Fatalf("task %s names unknown tool %s", task.ID, n)
			}
		}
	}
}

func TestToolMatchesToolBenchFunctionJSON(t *testing.T) {
	// The converted answers record the function JSON ToolBench showed the
	// model; ours must say the same thing.
	path := shareddata.Require(t, "stabletoolbench", "data_example", "model_predictions_converted", "virtual_chatgpt_cot", "G1_instruction.json")
	var conv map[string]struct {
		AvailableTools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"available_tools"`
	}
	if err := readJSON(path, &conv); err != nil {
		t.Fatal(err)
	}
	src, err := Load(queryDir(t))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCollection(src.Docs, CollectionOptions{})
	checked := 0
	for _, q := range conv {
		for _, ft := range q.AvailableTools {
			if ft.Name == "Finish" {
				continue
			}
			tool := c.Tool(ft.Name)
			if tool == nil {
				t.Fatalf("ToolBench function %s has no tool", ft.Name)
			}
			if got := tool.Meta["function_description"]; got != ft.Description {
				t.Errorf("%s description:\n got %q\nwant %q", ft.Name, got, ft.Description)
			}
			var want struct {
				Properties map[string]map[string]any `json:"properties"`
				Required   []string                  `json:"required"`
			}
			json.Unmarshal(ft.Parameters, &want)
			for name, p := range want.Properties {
				ps := tool.Input.Prop(name)
				if ps == nil || ps.Type != p["type"] {
					t.Errorf("%s param %s: got %+v, want %v", ft.Name, name, ps, p)
				}
			}
			if strings.Join(want.Required, ",") != strings.Join(tool.Input.Required, ",") {
				t.Errorf("%s required = %v, want %v", ft.Name, tool.Input.Required, want.Required)
			}
			checked++
		}
	}
	if checked < 10 {
		t.Fatalf("checked only %d functions", checked)
	}
}

func TestLoadToolsFolderLayout(t *testing.T) {
	src, err := Load(filepath.Join("testdata", "tools"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCollection(src.Docs, CollectionOptions{Name: "tb"})
	tool := c.Tool("songkick_concert_for_theclique")
	if tool == nil {
		t.Fatalf("tools = %v", c.Tools)
	}
	if tool.Category != "Data" || tool.GroupDescription == "" || tool.Binding.BaseURL != "https://theclique.p.rapidapi.com" || tool.Meta["host"] != "theclique.p.rapidapi.com" {
		t.Fatalf("tool = %+v %+v", tool, tool.Binding)
	}
	id := tool.Input.Prop("is_id")
	if id == nil || id.Type != "integer" || tool.Input.IsRequired("is_id") || string(id.Extra["x-name"]) != `"id"` {
		t.Fatalf("is_id = %+v", id)
	}
	doc := DocOf(tool)
	if doc.OptionalParameters[0].Name != "id" || doc.OptionalParameters[0].Type != "NUMBER" || doc.RequiredParameters[0].Default != "40698227-lumineers-at-aware-super-theatre" {
		t.Fatalf("DocOf = %+v", doc)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"bad.json": "{not json", "num.json": "42"} {
		p := filepath.Join(dir, name)
		writeFile(t, p, content)
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing path accepted")
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no .json") {
		t.Errorf("empty dir: %v", err)
	}
}

func TestResolveNormalisation(t *testing.T) {
	src, err := Load(filepath.Join("testdata", "tools"))
	if err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(NewCollection(src.Docs, CollectionOptions{}))
	tests := []struct{ cat, tool, api string }{
		{"Data", "theclique", "songkick_concert"},
		{"Data", "TheClique", "Songkick concert"},
		{"Data", "theclique_for_Data", "songkick_concert"},
		{"Data", "theclique", "songkick_concert_for_theclique"},
		{"Other", "theclique", "songkick_concert"}, // wrong category, unambiguous tool
	}
	for _, tt := range tests {
		if tool, err := ix.Resolve(tt.cat, tt.tool, tt.api); err != nil || tool.Name != "songkick_concert_for_theclique" {
			t.Errorf("Resolve(%q,%q,%q) = %v, %v", tt.cat, tt.tool, tt.api, tool, err)
		}
	}
	_, err = ix.Resolve("Data", "theclique", "songkick_concrt")
	if err == nil || toolenv.StatusOf(err) != toolenv.StatusUnknownTool || !strings.Contains(err.Error(), `"songkick_concert"`) {
		t.Errorf("typo: %v", err)
	}
	_, err = ix.Resolve("Data", "thecliqe", "x")
	if err == nil || !strings.Contains(err.Error(), "theclique") {
		t.Errorf("tool typo: %v", err)
	}
}

// TestResolveAPINamedForItsTool: an API whose standardized name holds
// "_for_<tool>" ("List for Weather API" of the tool "Weather API") is
// what a StableToolBench client names, and its server cuts the name at
// "_for_<tool>"; toolenv's Normalize cuts it the same way, and the index
// must then still find the API (it answered "no API \"list\"").
func TestResolveAPINamedForItsTool(t *testing.T) {
	docs := []APIDoc{
		{CategoryName: "Data", ToolName: "Weather API", APIName: "List for Weather API"},
		{CategoryName: "Data", ToolName: "Weather API", APIName: "Get for weather_api_v2"},
	}
	c := NewCollection(docs, CollectionOptions{})
	ix := NewIndex(c)
	for _, tt := range []struct{ api, want string }{
		{"list_for_weather_api", "list_for_weather_api_for_weather_api"},
		{"List for Weather API", "list_for_weather_api_for_weather_api"},
		{"get_for_weather_api_v2", "get_for_weather_api_v2_for_weather_api"},
	} {
		tool, err := ix.Resolve("Data", "weather_api", tt.api)
		if err != nil || tool.Name != tt.want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", tt.api, tool, err, tt.want)
		}
	}
	if _, _, file := CachePath("Data", "weather_api", "list_for_weather_api"); file != "list.json" {
		t.Errorf("CachePath file %q, want list.json (StableToolBench's server cuts the name at _for_weather_api)", file)
	}
}

func BenchmarkLoadQueries(b *testing.B) {
	dir := queryDir(b)
	for i := 0; i < b.N; i++ {
		src, err := Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		c := NewCollection(src.Docs, CollectionOptions{})
		NewIndex(c)
	}
}

// TestResolveExplainsWhatIsWrong checks the errors of requests that do
// not resolve, against the real query files: an API that exists in
// several categories (demo_project's "me" is in Events and Media) is not
// reported as missing when the category names none of them.
func TestResolveExplainsWhatIsWrong(t *testing.T) {
	src, err := Load(queryDir(t))
	if err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(NewCollection(src.Docs, CollectionOptions{}))
	tests := []struct {
		name                    string
		category, tool, api     string
		wantTitle               string // resolved API (standardized), or "" for an error
		wantInError, notInError []string
	}{
		{"right category", "Media", "demo_project", "me", "me", nil, nil},
		{"in two categories, neither sent", "Data", "currency_converter_v2", "convert", "", []string{"Finance", "Financial"}, []string{"has no API"}},
		{"ambiguous across categories", "Data", "demo_project", "me", "", []string{"Events", "Media", `"me"`}, []string{"has no API"}},
		{"missing API", "Media", "demo_project", "mee", "", []string{`has no API "mee"`, `did you mean "me"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := ix.Resolve(tt.category, tt.tool, tt.api)
			if tt.wantTitle != "" {
				if err != nil || tool.Meta["api_name"] != tt.wantTitle || tool.Meta["std_category"] != tt.category {
					t.Fatalf("Resolve = %v, %v; want API %q in %s", tool, err, tt.wantTitle, tt.category)
				}
				return
			}
			if err == nil {
				t.Fatalf("Resolve = %s, want an error", tool.ID)
			}
			msg := err.Error()
			for _, w := range tt.wantInError {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			for _, w := range tt.notInError {
				if strings.Contains(msg, w) {
					t.Errorf("error %q says %q", msg, w)
				}
			}
			if _, list, ok := strings.Cut(msg, "has the APIs "); ok {
				seen := map[string]bool{}
				for _, a := range strings.Split(strings.TrimSuffix(list, ")"), ", ") {
					if seen[a] {
						t.Errorf("error %q lists the API %s twice", msg, a)
					}
					seen[a] = true
				}
			}
		})
	}
}
