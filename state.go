package toolenv

// MetaState is the Tool.Meta key saying what a tool's answers depend on,
// and so which recorded answers the cache may give it: one of the State*
// values. A tool without it is StateStateless (every ToolBench, OpenAPI
// and NL2SQL tool).
const MetaState = "state"

// The values of Tool.Meta[MetaState].
const (
	// StateStateless: the answer depends on the arguments alone, so one
	// recorded answer serves every episode (StableToolBench's cache).
	StateStateless = "stateless"
	// StateRead: the answer depends on state that earlier calls of the
	// same session may have changed, and the call changes none (MCP
	// readOnlyHint). Its key holds the session's state-changing calls
	// before it.
	StateRead = "read"
	// StateWrite: the call may change state (an MCP tool without
	// readOnlyHint). Its key holds the session's state-changing calls
	// before it, and it joins them.
	StateWrite = "write"
)

// MetaIdempotent is the Tool.Meta key that, set to "true" on a
// StateWrite tool, says that calling it again with the same arguments
// right after has no further effect (MCP idempotentHint): such a repeat
// does not lengthen the session's history of state-changing calls.
const MetaIdempotent = "idempotent"

// MetaDestructive is the Tool.Meta key that, set to "false" on a
// StateWrite tool, says that its calls only add (MCP destructiveHint
// false): they never change or delete what is there.
const MetaDestructive = "destructive"

// States lists the values of Tool.Meta[MetaState].
var States = []string{StateStateless, StateRead, StateWrite}

// State returns the tool's Meta[MetaState], StateStateless when unset.
func (t *Tool) State() string {
	if t == nil {
		return StateStateless
	}
	if s := t.Meta[MetaState]; s != "" {
		return s
	}
	return StateStateless
}
