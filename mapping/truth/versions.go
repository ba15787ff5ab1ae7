package truth

import (
	"context"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/mapping"
	"github.com/toolenv/toolenv/mapping/graph"
	"github.com/toolenv/toolenv/mapping/structural"
)

// Rename returns copies of tools as members of collection name (IDs
// rewritten), so that two versions of one collection, which share its
// name, can be compared side by side.
func Rename(tools []*toolenv.Tool, name string) []*toolenv.Tool {
	out := make([]*toolenv.Tool, 0, len(tools))
	for _, t := range tools {
		c := t.Clone()
		c.Collection, c.ID = name, toolenv.ToolID(name, t.Name)
		out = append(out, c)
	}
	return out
}

// MapVersions maps the tools of one version (collection oldName) onto
// those of another (newName) with the structural mapper and its operation
// graph, one-to-one. Hidden tools are left out on both sides; deprecated
// tools of the new version (stubs that answer "gone") are never chosen as
// counterparts.
func MapVersions(ctx context.Context, old, cur []*toolenv.Tool, opts structural.Options) ([]*mapping.Mapping, error) {
	return mapSides(ctx, old, cur, opts, true)
}

// MapOnto maps each tool of from onto its best counterpart in to, several
// tools of from may share one (SEL onto SLOT). Hidden and deprecated tools
// are left out as in MapVersions.
func MapOnto(ctx context.Context, from, to []*toolenv.Tool, opts structural.Options) ([]*mapping.Mapping, error) {
	return mapSides(ctx, from, to, opts, false)
}

func mapSides(ctx context.Context, old, cur []*toolenv.Tool, opts structural.Options, oneToOne bool) ([]*mapping.Mapping, error) {
	m, oldName, newName := NewMatcher(old, cur, opts)
	if oneToOne {
		return m.Between(ctx, oldName, newName)
	}
	return m.Onto(ctx, oldName, newName)
}

// NewMatcher builds the structural matcher MapVersions uses over two
// collections' tools — hidden tools left out, and deprecated ones of cur
// — with the operation graph's neighbours, and returns it with the two
// collections' names.
func NewMatcher(old, cur []*toolenv.Tool, opts structural.Options) (m *structural.Matcher, oldName, newName string) {
	var tools []*toolenv.Tool
	for _, t := range old {
		oldName = t.Collection
		if !t.Hidden() {
			tools = append(tools, t)
		}
	}
	for _, t := range cur {
		newName = t.Collection
		if !t.Hidden() && t.Deprecated == nil {
			tools = append(tools, t)
		}
	}
	m = structural.New(tools, nil, opts)
	g := graph.Operations(m.Profiles())
	m.SetNeighbours(g.Neighbours)
	return m, oldName, newName
}
