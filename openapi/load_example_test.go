package openapi_test

import (
	"context"
	"fmt"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/openapi"
)

// Load turns each operation of an OpenAPI document into a tool: its
// parameters and JSON body merged into one input schema, with the
// binding saying where each argument goes.
func ExampleLoad() {
	c, err := openapi.Load(context.Background(), "testdata/petstore.yaml", openapi.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Name, c.Kind, c.Policy.Validation, len(c.Tools), "tools")
	for _, t := range c.Tools[:3] {
		fmt.Printf("%s: %s %s %v\n", t.Name, t.Binding.Method, t.Binding.Path, t.Params())
	}
	show := c.Tool("showPetById")
	in, _ := toolenv.MarshalJSONNoHTML(show.Input)
	fmt.Println(string(in))
	fmt.Println(show.Binding.BaseURL, show.Binding.In)
	// Output:
	// petstore openapi strict 8 tools
	// listPets: GET /pets [limit tags X-Request-ID]
	// createPet: POST /pets [name tag status weight secret owner]
	// showPetById: GET /pets/{petId} [petId]
	// {"type":"object","properties":{"petId":{"type":"integer","description":"The id of the pet","examples":[42],"format":"int64","minimum":1}},"required":["petId"]}
	// https://api.petstore.example.com/v1 map[petId:path]
}

// Read takes the document's bytes; refs must stay inside the document.
func ExampleRead() {
	doc := `openapi: 3.1.0
info: {title: Echo service, version: "1"}
paths:
  /echo:
    post:
      operationId: echo
      summary: Echo a message
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [message]
              properties:
                message: {type: string}
                times: {type: [integer, "null"], minimum: 1}
      responses:
        "200": {description: The echo}
`
	c, err := openapi.Read(context.Background(), []byte(doc), openapi.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	t := c.Tools[0]
	in, _ := toolenv.MarshalJSONNoHTML(t.Input)
	fmt.Println(c.Name, t.ID, t.Title)
	fmt.Println(string(in))
	// Output:
	// echo_service echo_service/echo Echo a message
	// {"type":"object","properties":{"message":{"type":"string"},"times":{"type":["integer","null"],"minimum":1}},"required":["message"]}
}
