// Package repair adapts calls written against older documentation to the
// tools a server offers now, using the mapping between the old and the
// current schemas (package structural computes it from the two versions'
// documentation alone, without the drift manifest).
//
// The adapter is pipeline middleware that runs before argument
// validation. A call to a tool whose old name now resolves to a stub (a
// renamed or deprecated endpoint) is sent to the tool the mapping names;
// a call whose arguments do not validate against the current schema —
// an unknown parameter (renamed), a wrong type (a number where a string
// is now wanted), flat arguments that are now nested or the reverse — is
// translated through the mapping's field pairs. A repair is used only if
// it leaves fewer problems than the call had; the result says what was
// repaired in its Warnings and Meta ("repaired", "repair_from",
// "repair_to").
package repair
