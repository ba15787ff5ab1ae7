package toolenv

// Provenance says how a result was made: the toolenv that made it and the
// effective configuration. Reports, manifests, datasets and evaluation
// summaries record it.
type Provenance struct {
	// Version is toolenv's version (toolenv version).
	Version string `json:"version"`
	// Revision is the VCS commit toolenv was built from, when known.
	Revision string `json:"revision,omitempty"`
	// Go is the Go toolchain that built it.
	Go string `json:"go,omitempty"`
	// Command is the command line, when a command made the result.
	Command []string `json:"command,omitempty"`
	// Config is the effective configuration, credentials hidden.
	Config any `json:"config,omitempty"`
}
