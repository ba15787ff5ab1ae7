package server

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/invoke"
	"github.com/toolenv/toolenv/openapi"
	"github.com/toolenv/toolenv/server/guard"
)

// TestSwagger2Served loads a Swagger 2.0 document and calls its tools at
// their own routes the way a client of the document would: arrays in
// one value as collectionFormat says (csv, the csv default, pipes) or
// repeated (multi), a header, a JSON body built from a $ref'd
// definition, an urlencoded form and a multipart upload (with the
// bearer token the guard asks of form posts); the backend must receive
// typed arguments.
func TestSwagger2Served(t *testing.T) {
	c, err := openapi.Load(context.Background(), filepath.Join("..", "examples", "openapi", "petstore-swagger2.yaml"), openapi.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reg := invoke.NewRegistry()
	if err := reg.Add(c, toolenv.HandlerFunc(echoBackend)); err != nil {
		t.Fatal(err)
	}
	const token = "a-token-of-thirty-two-characters"
	g, err := guard.New(guard.Policy{Tokens: []string{token}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(Options{Pipeline: invoke.New(reg, invoke.Options{}), Registry: reg, Guard: g}))
	defer srv.Close()

	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	_ = mw.WriteField("additionalMetadata", "front view")
	fw, _ := mw.CreateFormFile("file", "dog.png")
	fw.Write([]byte("PNGDATA"))
	mw.Close()

	for _, tc := range []struct {
		name, method, path, ctype, body string
		header                          [2]string
		tool, want                      string // the tool called and its arguments as JSON
	}{
		{"csv", "GET", "/pet/findByStatus?status=available,sold&limit=5", "", "", [2]string{},
			"findPetsByStatus", `{"limit":5,"status":["available","sold"]}`},
		{"csv by default, multi, pipes", "GET", "/pet/findByTags?tags=a,b&ids=1&ids=2&sort=name%7Cage", "", "", [2]string{},
			"findPetsByTags", `{"ids":[1,2],"sort":["name","age"],"tags":["a","b"]}`},
		{"a JSON array still reads as one", "GET", "/pet/findByTags?tags=%5B%22x%2Cy%22%5D", "", "", [2]string{},
			"findPetsByTags", `{"tags":["x,y"]}`},
		{"path and header", "DELETE", "/pet/7", "application/json", "", [2]string{"api_key", "k1"},
			"deletePet", `{"api_key":"k1","petId":7}`},
		{"JSON body from a definition", "POST", "/pet", "application/json", `{"name":"rex","photoUrls":["u"],"category":{"id":1,"name":"dogs"}}`, [2]string{},
			"addPet", `{"category":{"id":1,"name":"dogs"},"name":"rex","photoUrls":["u"]}`},
		{"urlencoded form", "POST", "/pet/7", "application/x-www-form-urlencoded", url.Values{"name": {"rex"}, "status": {"sold"}}.Encode(), [2]string{},
			"updatePetWithForm", `{"name":"rex","petId":7,"status":"sold"}`},
		{"multipart upload", "POST", "/pet/7/uploadImage", mw.FormDataContentType(), form.String(), [2]string{},
			"uploadFile", `{"additionalMetadata":"front view","file":"PNGDATA","petId":7}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body *strings.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
			if body != nil {
				req, _ = http.NewRequest(tc.method, srv.URL+tc.path, body)
			}
			req.Header.Set("Authorization", "Bearer "+token)
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			if tc.header[0] != "" {
				req.Header.Set(tc.header[0], tc.header[1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got struct {
				Tool string         `json:"tool"`
				Args map[string]any `json:"args"`
			}
			var raw bytes.Buffer
			raw.ReadFrom(resp.Body)
			if resp.StatusCode != 200 || json.Unmarshal(raw.Bytes(), &got) != nil {
				t.Fatalf("%d %s", resp.StatusCode, raw.String())
			}
			args, _ := json.Marshal(got.Args)
			if got.Tool != tc.tool || string(args) != tc.want {
				t.Errorf("%s(%s), want %s(%s)", got.Tool, args, tc.tool, tc.want)
			}
		})
	}
	// A required form field left out is the usual 400.
	req, _ := http.NewRequest("POST", srv.URL+"/pet/7", strings.NewReader("name=rex"))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("a form without its required status: %d, want 400", resp.StatusCode)
	}
}
