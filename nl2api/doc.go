// Package nl2api builds live tool collections from NL2SQL data (BIRD), as
// Live API-Bench did, with wider SQL coverage: for every question it plans
// the gold SQL (nl2api/sqlplan), decomposes it into SLOT and SEL gold call
// sequences (nl2api/decompose), turns it into a REST endpoint
// (nl2api/endpoint), and keeps a task only when its gold sequence,
// executed through the backend that serves it (backend/sqltools,
// backend/sqlrest), returns the gold SQL's answer under answer.Equal.
//
// Build writes one collection folder per flavor (OUT/slot, OUT/sel,
// OUT/rest) with tools, tasks, OpenAPI and OpenAI function views, the
// variants asked for (obfuscated names, shrunk REST candidate sets) and a
// report (OUT/report.json, OUT/report.md) of what was kept and why the
// rest was not.
package nl2api
