package nl2api

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/sqlc-dev/meyer/ast"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqlrest"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/nl2api/endpoint"
	"github.com/toolenv/toolenv/nl2api/sqlplan"
)

// writeVariants writes the obfuscated and shrunk variants asked for.
func writeVariants(ctx context.Context, built []*Built, shared map[string]*rodb.DB, opt *Options) ([]VariantReport, error) {
	var out []VariantReport
	for _, b := range built {
		b = readOnlyBuilt(b)
		if opt.Obfuscate {
			v, err := writeObfuscated(ctx, b, shared, opt)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if b.Flavor == Rest {
			for _, p := range opt.Shrink {
				v, err := writeShrunk(b, p, opt)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
		}
	}
	return out, nil
}

// readOnlyBuilt is b without its write tools, hidden world tools and
// write tasks (Options.Writes): the variants are made of the read-only
// collection. A write tool names the columns it writes inside its row
// objects, where obfuscation does not reach.
func readOnlyBuilt(b *Built) *Built {
	if b.Writes == nil {
		return b
	}
	cp := *b
	var tools []*toolenv.Tool
	for _, t := range b.Collection.Tools {
		switch op := t.Meta[sqltools.MetaOp]; {
		case op == sqltools.OpInitWorld, op == sqltools.OpInspect, t.State() == toolenv.StateWrite, t.Meta[sqlrest.MetaTable] != "",
			strings.HasPrefix(t.Name, "find_") && t.Meta[sqlrest.MetaSQL] != "" && t.Meta[toolenv.MetaState] == toolenv.StateRead && b.Flavor == Rest:
			continue
		}
		c := t.Clone()
		if b.Flavor != Rest {
			delete(c.Meta, toolenv.MetaState)
		}
		tools = append(tools, c)
	}
	c := toolenv.NewCollection(b.Collection.Name, b.Collection.Kind, tools)
	c.Version, c.Policy, c.Backend, c.Description, c.Meta, c.Dir = b.Collection.Version, b.Collection.Policy, b.Collection.Backend, b.Collection.Description, b.Collection.Meta, b.Collection.Dir
	cp.Collection = c
	cp.Tasks = nil
	for _, t := range b.Tasks {
		if _, w := t.Meta[MetaWrite]; !w {
			cp.Tasks = append(cp.Tasks, t)
		}
	}
	return &cp
}

// Obfuscation is the mapping of an obfuscated collection to its
// original (written beside the collection's folder as
// <flavor>-obfuscated.mapping.json): each FUNC_n is a tool, each ARG_n an
// argument name; Meta holds what the backends need (operations, SQL,
// argument maps). Applying it in reverse restores the original names.
type Obfuscation = sqltools.Obfuscation

// MappingFile is the name of an obfuscated collection's mapping file,
// beside its folder dir.
func MappingFile(dir string) string { return filepath.Clean(dir) + ".mapping.json" }

// seeded returns a random source for one purpose, fixed by the seed.
func seeded(seed int64, purpose string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(purpose))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}

// Obfuscate returns a copy of c whose visible tools are named FUNC_n and
// whose arguments (and the properties of object arguments) are named
// ARG_n, with the tasks rewritten to match and the mapping. Nothing of
// the original names is left in what the copy shows: descriptions keep
// their prose but name tools and arguments by their new names (every
// identifier with an underscore, and every `backticked` one), titles are
// dropped, and the backend meta (operations, SQL templates) moves into
// the mapping. Names that are also the data's own (tables, columns: the
// values key_name takes) stay in prose, since the data keeps them. Hidden
// tools and the label argument keep their names. The numbering is a
// seeded shuffle.
func Obfuscate(c *toolenv.Collection, tasks []*toolenv.Task, seed int64) (*toolenv.Collection, []*toolenv.Task, *Obfuscation) {
	name := c.Name + "-obfuscated"
	ob := &Obfuscation{Collection: name, Original: c.Name, Seed: seed, Tools: map[string]string{}, Arguments: map[string]string{},
		Paths: map[string]string{}, Meta: map[string]map[string]string{}}
	var visible []*toolenv.Tool
	argSet := map[string]bool{}
	for _, t := range c.Tools {
		if t.Hidden() {
			continue
		}
		visible = append(visible, t)
		for _, a := range t.Input.Names() {
			if a == t.LabelArg() {
				continue
			}
			argSet[a] = true
			for _, n := range t.Input.Prop(a).Names() {
				argSet[n] = true
			}
		}
	}
	r := seeded(seed, "obfuscate "+c.Name)
	order := r.Perm(len(visible))
	toolName := map[string]string{}
	for i, t := range visible {
		n := fmt.Sprintf("FUNC_%d", order[i])
		toolName[t.Name] = n
		ob.Tools[n] = t.Name
	}
	args := make([]string, 0, len(argSet))
	for a := range argSet {
		args = append(args, a)
	}
	sort.Strings(args)
	argOrder := r.Perm(len(args))
	argName := map[string]string{}
	for i, a := range args {
		n := fmt.Sprintf("ARG_%d", argOrder[i])
		argName[a] = n
		ob.Arguments[n] = a
	}
	text := newRenamer(toolName, argName, dataNames(c, tasks))
	var tools []*toolenv.Tool
	for _, t := range c.Tools {
		n, ok := toolName[t.Name]
		if !ok {
			tools = append(tools, t.Clone())
			continue
		}
		nt := t.Clone()
		nt.Name, nt.Title = n, ""
		nt.Description = text.replace(t.Description)
		amap := map[string]string{}
		in := toolenv.ObjectSchema()
		in.AdditionalProperties = t.Input.AdditionalProperties
		for _, a := range t.Input.Names() {
			pub := a
			if a != t.LabelArg() {
				pub = argName[a]
				amap[pub] = a
			}
			ps := text.schema(t.Input.Prop(a))
			if nested := t.Input.Prop(a).Names(); len(nested) > 0 {
				inner := toolenv.ObjectSchema()
				inner.Description, inner.AdditionalProperties = ps.Description, ps.AdditionalProperties
				for _, k := range nested {
					inner.SetProp(argName[k], text.schema(t.Input.Prop(a).Prop(k)))
					if t.Input.Prop(a).IsRequired(k) {
						inner.Required = append(inner.Required, argName[k])
					}
					amap[pub+"."+argName[k]] = a + "." + k
				}
				ps = inner
			}
			in.SetProp(pub, ps)
			if t.Input.IsRequired(a) {
				in.Required = append(in.Required, pub)
			}
		}
		nt.Input = in
		if t.Output != nil {
			nt.Output = text.schema(t.Output)
		}
		meta := map[string]string{}
		for k, v := range t.Meta {
			meta[k] = v
		}
		raw, _ := json.Marshal(amap)
		meta[sqltools.MetaArgMap] = string(raw)
		ob.Meta[n] = meta
		// What the obfuscated tool shows of its meta: nothing named.
		nt.Meta = nil
		if la := t.LabelArg(); la != "" {
			nt.Meta = map[string]string{toolenv.MetaLabelArg: la}
		}
		if nt.Binding != nil {
			p := endpoint.PathPrefix(t.Group) + n
			ob.Paths[p] = nt.Binding.Path
			nt.Binding.Path = p
		}
		tools = append(tools, nt)
	}
	oc := toolenv.NewCollection(name, c.Kind, tools)
	toolenv.SortTools(oc.Tools)
	oc.Reindex()
	oc.Version, oc.Policy, oc.Backend = c.Version, c.Policy, c.Backend
	oc.Description = text.replace(c.Description)
	oc.Meta = map[string]string{"obfuscation_of": c.Name, "seed": fmt.Sprint(seed)}
	for k, v := range c.Meta {
		oc.Meta[k] = v
	}
	var out []*toolenv.Task
	for _, t := range tasks {
		nt := *t
		nt.Collection = name
		nt.Tools = nil
		for _, n := range t.Tools {
			nt.Tools = append(nt.Tools, rename(toolName, n))
		}
		nt.Gold = nil
		for _, g := range t.Gold {
			ng := toolenv.GoldCall{Name: rename(toolName, g.Name), Label: g.Label, Args: map[string]any{}}
			for k, v := range g.Args {
				if obj, ok := v.(map[string]any); ok {
					inner := map[string]any{}
					for ik, iv := range obj {
						inner[rename(argName, ik)] = iv
					}
					v = inner
				}
				ng.Args[rename(argName, k)] = v
			}
			nt.Gold = append(nt.Gold, ng)
		}
		out = append(out, &nt)
	}
	return oc, out, ob
}

func rename(m map[string]string, s string) string {
	if n, ok := m[s]; ok {
		return n
	}
	return s
}

// renamer rewrites text for an obfuscated collection.
type renamer struct {
	names map[string]string // original identifier → obfuscated
	data  map[string]bool   // the data's own names (lower case)
	word  *regexp.Regexp
}

var identRE = regexp.MustCompile("`[A-Za-z_][A-Za-z0-9_]*`|[A-Za-z_][A-Za-z0-9_]*")

func newRenamer(tools, args map[string]string, data map[string]bool) *renamer {
	names := map[string]string{}
	for k, v := range args {
		names[k] = v
	}
	for k, v := range tools {
		names[k] = v
	}
	return &renamer{names: names, data: data, word: identRE}
}

// replace renames the identifiers of s: `backticked` ones always, others
// when they hold an underscore and are not also the data's own names.
func (r *renamer) replace(s string) string {
	return r.word.ReplaceAllStringFunc(s, func(w string) string {
		if strings.HasPrefix(w, "`") {
			if n, ok := r.names[strings.Trim(w, "`")]; ok {
				return "`" + n + "`"
			}
			return w
		}
		if n, ok := r.names[w]; ok && strings.Contains(w, "_") && !r.data[strings.ToLower(w)] {
			return n
		}
		return w
	})
}

// schema returns a copy of s with its descriptions renamed and its
// titles dropped, all the way down.
func (r *renamer) schema(s *toolenv.Schema) *toolenv.Schema {
	if s == nil {
		return nil
	}
	c := s.Clone()
	var walk func(x *toolenv.Schema)
	walk = func(x *toolenv.Schema) {
		if x == nil {
			return
		}
		x.Title = ""
		x.Description = r.replace(x.Description)
		for _, n := range x.Names() {
			walk(x.Prop(n))
		}
		walk(x.Items)
	}
	walk(c)
	return c
}

// dataNames are the names the data itself uses: the starting-table
// columns tasks offer (meta.columns) and the identifiers of REST SQL
// templates (tables, columns).
func dataNames(c *toolenv.Collection, tasks []*toolenv.Task) map[string]bool {
	out := map[string]bool{}
	for _, t := range tasks {
		if cols, err := sqltools.TaskColumns(t); err == nil {
			for _, col := range cols {
				out[strings.ToLower(col.Name)] = true
			}
		}
	}
	for _, t := range c.Tools {
		q := t.Meta[sqlrest.MetaSQL]
		if q == "" {
			continue
		}
		if stmt, err := sqlplan.Parse(q); err == nil {
			ast.Walk(stmt, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					out[strings.ToLower(id.Name)] = true
				}
				return true
			})
		}
	}
	return out
}

func writeObfuscated(ctx context.Context, b *Built, shared map[string]*rodb.DB, opt *Options) (VariantReport, error) {
	oc, tasks, ob := Obfuscate(b.Collection, b.Tasks, opt.Seed)
	dir := filepath.Join(opt.Out, b.Flavor+"-obfuscated")
	mapping := MappingFile(dir)
	spec, err := rebase(oc.Backend, b.Dir, dir, filepath.Base(mapping))
	if err != nil {
		return VariantReport{}, err
	}
	oc.Backend = spec
	oc.Dir = dir
	v := VariantReport{Name: oc.Name, Dir: dir, Kind: "obfuscated", Tools: len(oc.Tools), Tasks: len(tasks), Note: "mapping in " + filepath.Base(mapping) + " beside the folder"}
	opt.outputs.add(mapping)
	if err := toolenv.WriteJSONFile(mapping, ob); err != nil {
		return v, err
	}
	failures, err := verifyAll(ctx, backendOpener(oc, shared, opt), oc, tasks, "verify "+oc.Name, opt)
	if err != nil {
		return v, fmt.Errorf("variant %s: %w", oc.Name, err)
	}
	v.Verified = len(tasks) - len(failures)
	for i, f := range failures {
		opt.Logger.Warn("obfuscated task does not verify", "task", tasks[i].ID, "reason", f.Reason, "detail", f.Detail)
	}
	return v, writeCollection(dir, oc, tasks, opt)
}

// rebase rewrites the database paths of a backend spec written for
// folder from so that they hold from folder to; mapping, when set, is the
// obfuscation mapping file, relative to the folder (beside it).
func rebase(spec toolenv.BackendSpec, from, to string, mapping ...string) (toolenv.BackendSpec, error) {
	var cfg struct {
		Flavor    string            `json:"flavor,omitempty"`
		Databases map[string]string `json:"databases"`
	}
	if err := toolenv.DecodeJSON(spec.Config, &cfg); err != nil {
		return spec, err
	}
	absTo, err := filepath.Abs(to)
	if err != nil {
		return spec, err
	}
	for k, p := range cfg.Databases {
		abs := rodb.ResolvePath(from, p)
		if a, err := filepath.Abs(abs); err == nil {
			abs = a
		}
		if rel, err := filepath.Rel(absTo, abs); err == nil {
			cfg.Databases[k] = filepath.ToSlash(rel)
		}
	}
	ob := ""
	if len(mapping) > 0 && mapping[0] != "" {
		ob = "../" + mapping[0]
	}
	var raw []byte
	if spec.Type == sqlrest.BackendType {
		raw, err = json.Marshal(sqlrest.Config{Databases: cfg.Databases, Obfuscation: ob})
	} else {
		raw, err = json.Marshal(sqltools.Config{Flavor: cfg.Flavor, Databases: cfg.Databases, Obfuscation: ob})
	}
	return toolenv.BackendSpec{Type: spec.Type, Config: raw}, err
}

// Shrink returns tasks offering about percent% of their tools (rounded
// up, at least one): the gold tools plus a seeded random choice of the
// others.
func Shrink(tasks []*toolenv.Task, percent int, seed int64, collection string) []*toolenv.Task {
	var out []*toolenv.Task
	for _, t := range tasks {
		nt := *t
		nt.Collection = collection
		gold := map[string]bool{}
		for _, g := range t.Gold {
			gold[g.Name] = true
		}
		n := int(math.Ceil(float64(len(t.Tools)) * float64(percent) / 100))
		var keep, rest []string
		for _, name := range t.Tools {
			if gold[name] {
				keep = append(keep, name)
			} else {
				rest = append(rest, name)
			}
		}
		r := seeded(seed, fmt.Sprintf("shrink %d %s", percent, t.ID))
		r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
		for _, name := range rest {
			if len(keep) >= n {
				break
			}
			keep = append(keep, name)
		}
		sort.Strings(keep)
		nt.Tools = keep
		out = append(out, &nt)
	}
	return out
}

func writeShrunk(b *Built, percent int, opt *Options) (VariantReport, error) {
	name := fmt.Sprintf("%s-shrink-%d", b.Collection.Name, percent)
	dir := filepath.Join(opt.Out, fmt.Sprintf("%s-shrink-%d", b.Flavor, percent))
	tools := make([]*toolenv.Tool, len(b.Collection.Tools))
	for i, t := range b.Collection.Tools {
		tools[i] = t.Clone()
	}
	c := toolenv.NewCollection(name, b.Collection.Kind, tools)
	c.Version, c.Description, c.Policy = b.Collection.Version, b.Collection.Description, b.Collection.Policy
	c.Meta = map[string]string{"shrink_of": b.Collection.Name, "shrink_percent": fmt.Sprint(percent), "seed": fmt.Sprint(opt.Seed)}
	spec, err := rebase(b.Collection.Backend, b.Dir, dir)
	if err != nil {
		return VariantReport{}, err
	}
	c.Backend = spec
	tasks := Shrink(b.Tasks, percent, opt.Seed, name)
	offered := 0
	for _, t := range tasks {
		has := map[string]bool{}
		for _, n := range t.Tools {
			has[n] = true
		}
		ok := true
		for _, g := range t.Gold {
			ok = ok && has[g.Name]
		}
		if ok {
			offered++
		}
	}
	if err := writeCollection(dir, c, tasks, opt); err != nil {
		return VariantReport{}, err
	}
	return VariantReport{Name: name, Dir: dir, Kind: "shrink", Tools: len(c.Tools), Tasks: len(tasks), Verified: offered,
		Note: fmt.Sprintf("%d%% of each database's REST tools per task; verified = tasks offering their gold tool", percent)}, nil
}
