// Package invoke is toolenv's one call path: a Registry that routes each
// Call to its collection's backend, and the middleware every front-end's
// calls pass through on the way (panic recovery, observation, timeouts,
// validation, result limits, caching).
//
// New assembles the standard pipeline:
//
//	Observe → Recover → Timeout → [BeforeValidate…] → Validate →
//	[AfterValidate…: drift, faults, failover] → Limit → Cache → Limit → Registry → backend
//
// Front-ends resolve a tool with Registry.Resolve, build a toolenv.Call and
// invoke the pipeline; nothing here knows any wire format.
package invoke
