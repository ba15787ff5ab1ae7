package nl2api

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqlrest"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/backend/sqltools/rodb"
)

// writeVariants writes the obfuscated and shrunk variants asked for.
func writeVariants(ctx context.Context, built []*Built, shared map[string]*rodb.DB, opt *Options) ([]VariantReport, error) {
	var out []VariantReport
	for _, b := range built {
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

// Obfuscation is the mapping of an obfuscated collection to its
// original (obfuscation.json): each FUNC_n is a tool, each ARG_n an
// argument name. Applying it in reverse restores the original names.
type Obfuscation struct {
	Collection string            `json:"collection"`
	Original   string            `json:"original"`
	Seed       int64             `json:"seed"`
	Tools      map[string]string `json:"tools"`
	Arguments  map[string]string `json:"arguments"`
	// Paths maps obfuscated REST paths to the original ones.
	Paths map[string]string `json:"paths,omitempty"`
}

// seeded returns a random source for one purpose, fixed by the seed.
func seeded(seed int64, purpose string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(purpose))
	return rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
}

// Obfuscate returns a copy of c whose visible tools are named FUNC_n and
// whose top-level arguments are named ARG_n (descriptions kept; hidden
// tools and the label argument of SLOT/SEL tools keep their names; an API
// parameter called "label" is renamed like any other), tasks rewritten to
// match, and the mapping. The numbering is a seeded shuffle.
func Obfuscate(c *toolenv.Collection, tasks []*toolenv.Task, seed int64) (*toolenv.Collection, []*toolenv.Task, *Obfuscation) {
	name := c.Name + "-obfuscated"
	ob := &Obfuscation{Collection: name, Original: c.Name, Seed: seed, Tools: map[string]string{}, Arguments: map[string]string{}, Paths: map[string]string{}}
	var visible []*toolenv.Tool
	argSet := map[string]bool{}
	for _, t := range c.Tools {
		if t.Hidden() {
			continue
		}
		visible = append(visible, t)
		for _, a := range t.Input.Names() {
			if a != t.LabelArg() {
				argSet[a] = true
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
	var tools []*toolenv.Tool
	for _, t := range c.Tools {
		nt := t.Clone()
		if n, ok := toolName[t.Name]; ok {
			nt.Name = n
			nt.Title = ""
			in := toolenv.ObjectSchema()
			in.AdditionalProperties = t.Input.AdditionalProperties
			amap := map[string]string{}
			for _, a := range t.Input.Names() {
				pub := a
				if a != t.LabelArg() {
					pub = argName[a]
					amap[pub] = a
				}
				in.SetProp(pub, t.Input.Prop(a).Clone())
				if t.Input.IsRequired(a) {
					in.Required = append(in.Required, pub)
				}
			}
			nt.Input = in
			raw, _ := json.Marshal(amap)
			if nt.Meta == nil {
				nt.Meta = map[string]string{}
			}
			nt.Meta[sqltools.MetaArgMap] = string(raw)
			if nt.Binding != nil {
				p := "/v1/bird/" + t.Group + "/" + n
				ob.Paths[p] = nt.Binding.Path
				nt.Binding.Path = p
			}
		}
		tools = append(tools, nt)
	}
	oc := toolenv.NewCollection(name, c.Kind, tools)
	toolenv.SortTools(oc.Tools)
	oc.Reindex()
	oc.Version, oc.Description, oc.Policy, oc.Backend = c.Version, c.Description, c.Policy, c.Backend
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

func writeObfuscated(ctx context.Context, b *Built, shared map[string]*rodb.DB, opt *Options) (VariantReport, error) {
	oc, tasks, ob := Obfuscate(b.Collection, b.Tasks, opt.Seed)
	dir := filepath.Join(opt.Out, b.Flavor+"-obfuscated")
	spec, err := rebase(oc.Backend, b.Dir, dir)
	if err != nil {
		return VariantReport{}, err
	}
	oc.Backend = spec
	oc.Dir = dir
	v := VariantReport{Name: oc.Name, Dir: dir, Kind: "obfuscated", Tools: len(oc.Tools), Tasks: len(tasks), Note: "mapping in obfuscation.json"}
	h, closer, err := openBackend(ctx, oc, shared, opt)
	if err != nil {
		return v, fmt.Errorf("variant %s: %w", oc.Name, err)
	}
	failures := verifyAll(ctx, h, oc, tasks, "verify "+oc.Name, opt)
	closer()
	v.Verified = len(tasks) - len(failures)
	for i, f := range failures {
		opt.Logger.Warn("obfuscated task does not verify", "task", tasks[i].ID, "reason", f.Reason, "detail", f.Detail)
	}
	if err := writeCollection(dir, oc, tasks); err != nil {
		return v, err
	}
	return v, toolenv.WriteJSONFile(filepath.Join(dir, "obfuscation.json"), ob)
}

// rebase rewrites the database paths of a backend spec written for
// folder from so that they hold from folder to.
func rebase(spec toolenv.BackendSpec, from, to string) (toolenv.BackendSpec, error) {
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
	var raw []byte
	if spec.Type == sqlrest.BackendType {
		raw, err = json.Marshal(sqlrest.Config{Databases: cfg.Databases})
	} else {
		raw, err = json.Marshal(sqltools.Config{Flavor: cfg.Flavor, Databases: cfg.Databases})
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
	if err := writeCollection(dir, c, tasks); err != nil {
		return VariantReport{}, err
	}
	return VariantReport{Name: name, Dir: dir, Kind: "shrink", Tools: len(c.Tools), Tasks: len(tasks), Verified: offered,
		Note: fmt.Sprintf("%d%% of each database's REST tools per task; verified = tasks offering their gold tool", percent)}, nil
}
