package store

import (
	"context"
	"fmt"
	"io"
)

// MigrationReport is what Migrate did: every component's schema version
// after it, and the version each was at before.
type MigrationReport struct {
	// Components are the versions after migrating.
	Components []SchemaVersion `json:"components"`
	// Store is where the store is (a postgres:// DSN without its
	// password).
	Store string `json:"store"`
	// Kind is the store's kind ("sqlite", "postgres").
	Kind string `json:"-"`
	// Before is each component's version before migrating.
	Before map[string]int `json:"-"`
}

// Migrate brings the schema of the store dsn names (see Open) to this
// program's versions of its own components and extra, as toolenv store
// migrate does, and reports the versions before and after. A store a
// newer program migrated is refused (*SchemaError).
func Migrate(ctx context.Context, dsn string, extra []Migration, opts Options) (*MigrationReport, error) {
	before, err := ReadSchema(ctx, dsn, extra)
	if err != nil {
		return nil, err
	}
	opts.Migrations = extra
	st, err := Open(ctx, dsn, opts)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	after, err := st.Schema(ctx)
	if err != nil {
		return nil, err
	}
	rep := &MigrationReport{Components: after, Store: st.Path(), Kind: st.Kind(), Before: map[string]int{}}
	for _, v := range before {
		rep.Before[v.Component] = v.Version
	}
	return rep, nil
}

// WriteText writes the report as toolenv store migrate prints it: the
// store, then one line per component saying whether it was migrated.
func (r *MigrationReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "store %s (%s):\n", r.Store, r.Kind)
	for _, v := range r.Components {
		note := "up to date"
		switch {
		case v.Known == 0:
			note = "not known to this toolenv (left alone)"
		case r.Before[v.Component] != v.Version:
			note = fmt.Sprintf("migrated from %d", r.Before[v.Component])
		}
		fmt.Fprintf(w, "  %-10s version %d  %s\n", v.Component, v.Version, note)
	}
}

// Status says where v stands against this program: up to date, newer
// (upgrade this program), older (migrate) or unknown to it.
func (v SchemaVersion) Status() string {
	switch {
	case v.Known == 0:
		return "not known to this toolenv"
	case v.Version > v.Known:
		return fmt.Sprintf("newer than this toolenv (%d): upgrade it", v.Known)
	case v.Version < v.Known:
		return fmt.Sprintf("toolenv store migrate brings it to %d", v.Known)
	}
	return "up to date"
}

// WriteSchemaStatus writes one line per component with its version and
// Status, as toolenv store status prints them.
func WriteSchemaStatus(w io.Writer, vs []SchemaVersion) {
	for _, v := range vs {
		fmt.Fprintf(w, "%-10s version %d  %s\n", v.Component, v.Version, v.Status())
	}
}
