// Package openapi converts between toolenv collections and OpenAPI
// documents: Document writes an OpenAPI 3.1 description of a collection
// (served at /openapi.json and written beside every built collection).
package openapi
