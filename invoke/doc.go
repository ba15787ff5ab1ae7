// Package invoke is toolenv's one call path: a Registry that routes each
// Call to its collection's backend, and the middleware every front-end's
// calls pass through on the way (panic recovery, observation, timeouts,
// validation, result limits, caching).
//
// New assembles the standard pipeline:
//
//	Observe → Recover → Timeout → [BeforeValidate…: failover, faults, drift] →
//	LenientCache → Validate → [AfterValidate…: drift] → Limit → Cache → Limit → Registry → backend
//
// LenientCache acts on lenient collections only (ToolBench documentation):
// they are looked up before validation, as StableToolBench's server does,
// and never rejected for a missing argument; strict collections are looked
// up only once their arguments are valid.
//
// Front-ends resolve a tool with Registry.Resolve, build a toolenv.Call and
// invoke the pipeline; nothing here knows any wire format.
package invoke
