// Package openapi converts between toolenv collections and OpenAPI
// documents: Load and Read import an OpenAPI 3.0 or 3.1 document (JSON or
// YAML) as a collection, one tool per operation; Document writes the
// OpenAPI 3.1 description of a collection (served at /openapi.json and
// written beside every built collection).
package openapi
