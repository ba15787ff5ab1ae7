package dataset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/toolenv/toolenv/mirror"
	"github.com/toolenv/toolenv/mirror/dataset"
)

// Open sets up what "toolenv mirror run" runs: here an OpenAPI
// document's one operation, reached at a real HTTP server on loopback
// (Upstream.BaseURL), mirrored into a dataset in a temporary folder with
// the schema-driven sampler (no model).
func ExampleOpen() {
	ctx := context.Background()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		city := r.URL.Query().Get("city")
		if city == "" {
			http.Error(w, `{"error": "missing required parameter: city"}`, http.StatusBadRequest)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"city": city, "summary": "sunny"})
	}))
	defer api.Close()
	dir, _ := os.MkdirTemp("", "dataset-example")
	defer os.RemoveAll(dir)
	doc := filepath.Join(dir, "weather.yaml")
	os.WriteFile(doc, []byte(`openapi: 3.0.0
info: {title: weather, version: "1"}
servers: [{url: "http://weather.invalid"}]
paths:
  /forecast:
    get:
      operationId: forecast
      summary: The forecast of a city
      parameters: [{name: city, in: query, required: true, schema: {type: string, enum: [Paris, Lyon, Oslo]}}]
      responses: {"200": {description: the forecast, content: {application/json: {schema: {type: object}}}}}
`), 0o644)

	cfg := dataset.Default()
	cfg.Out, cfg.OpenAPI, cfg.Upstream.BaseURL = filepath.Join(dir, "mirror"), []string{doc}, api.URL
	cfg.Stages.PerAPI, cfg.Stages.Harvest = 4, false
	d, err := dataset.Open(ctx, &cfg, dataset.Options{})
	if err != nil {
		panic(err)
	}
	defer d.Close()
	rep, err := d.Run(ctx, []string{mirror.StageGenerate, mirror.StageCollect, mirror.StageFilter})
	if err != nil {
		panic(err)
	}
	s := rep.Summary
	fmt.Println("APIs:", len(s.APIs), "requests:", s.Requests, "answered:", s.Real)
	_, err = os.Stat(filepath.Join(cfg.Out, "report.md"))
	fmt.Println("report written:", err == nil)
	// Output:
	// APIs: 1 requests: 4 answered: 4
	// report written: true
}
