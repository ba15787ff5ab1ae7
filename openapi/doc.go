// Package openapi converts between toolenv collections and OpenAPI
// documents: Load and Read import an OpenAPI 3.0 or 3.1 document, or a
// Swagger 2.0 one (converted with kin-openapi's openapi2conv), JSON or
// YAML, as a collection, one tool per operation; Document and
// DocumentWith write the OpenAPI 3.1 description of a collection (served
// at /openapi.json and written beside every built collection), which
// third-party tools take as it is: it lints clean with Redocly's
// recommended rules, describes every error response and the task-session
// protocol, and carries the documented examples.
package openapi
