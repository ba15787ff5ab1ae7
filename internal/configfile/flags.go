package configfile

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// BindOptions choose which fields become flags.
type BindOptions struct {
	// Skip leaves out the fields whose keys start with one of these
	// prefixes ("server." leaves out a whole section).
	Skip []string
	// Rename gives some fields another flag name for this command: key →
	// flag name.
	Rename map[string]string
}

// Flags are the flags bound to the fields of a configuration struct.
type Flags struct {
	fs     *pflag.FlagSet
	shadow reflect.Value // the flags' values
	bound  []boundFlag
}

type boundFlag struct {
	field *Field
	name  string
}

// Bind registers on fs one flag for each field of defaults' type that has
// a flag tag, with defaults' values as the flags' defaults. Apply copies
// the flags the user gave into a configuration.
func Bind(fs *pflag.FlagSet, defaults any, opts BindOptions) *Flags {
	src := structOf(defaults)
	b := &Flags{fs: fs, shadow: reflect.New(src.Type()).Elem()}
	b.shadow.Set(src)
	deepCopy(b.shadow)
	for _, f := range Fields(defaults) {
		if f.Flag == "" || slices.ContainsFunc(opts.Skip, func(p string) bool { return strings.HasPrefix(f.Key, p) }) {
			continue
		}
		name := f.Flag
		if r, ok := opts.Rename[f.Key]; ok {
			name = r
		}
		usage := f.Help
		if f.Enum != nil {
			var vals []string
			for _, e := range f.Enum {
				if e != "" {
					vals = append(vals, e)
				}
			}
			if !strings.Contains(usage, vals[0]) {
				usage += " (" + strings.Join(vals, ", ") + ")"
			}
		}
		p := f.value(b.shadow).Addr().Interface()
		switch p := p.(type) {
		case *time.Duration:
			fs.DurationVarP(p, name, f.Short, *p, usage)
		case *string:
			if f.Enum != nil || f.URL {
				fs.VarP(&checkedString{p: p, f: f}, name, f.Short, usage)
			} else {
				fs.StringVarP(p, name, f.Short, *p, usage)
			}
		case *bool:
			fs.BoolVarP(p, name, f.Short, *p, usage)
		case *int:
			fs.IntVarP(p, name, f.Short, *p, usage)
		case *int64:
			fs.Int64VarP(p, name, f.Short, *p, usage)
		case *uint64:
			fs.Uint64VarP(p, name, f.Short, *p, usage)
		case *float64:
			fs.Float64VarP(p, name, f.Short, *p, usage)
		case *[]string:
			if f.Comma {
				fs.StringSliceVarP(p, name, f.Short, *p, usage)
			} else {
				fs.StringArrayVarP(p, name, f.Short, *p, usage)
			}
		default:
			panic(fmt.Sprintf("configfile: no flag for %s (%T)", f.Key, p))
		}
		b.bound = append(b.bound, boundFlag{field: f, name: name})
	}
	return b
}

// checkedString is a string flag whose value is checked as it is parsed
// (its field's enum and URL tags), so that a wrong value is a usage error
// naming the flag, with the valid values and the nearest one.
type checkedString struct {
	p *string
	f *Field
}

func (c *checkedString) String() string { return *c.p }
func (c *checkedString) Type() string   { return "string" }

// Set implements pflag.Value.
func (c *checkedString) Set(v string) error {
	if err := c.f.check(v); err != nil {
		return err
	}
	*c.p = v
	return nil
}

// deepCopy gives the slices of a struct value their own backing arrays.
func deepCopy(rv reflect.Value) {
	for _, f := range Fields(rv.Addr().Interface()) {
		fv := f.value(rv)
		if fv.Kind() == reflect.Slice && !fv.IsNil() {
			fv.Set(reflect.ValueOf(slices.Clone(fv.Interface().([]string))))
		}
	}
}

// Apply sets in cfg (a pointer to the struct Bind was given) every field
// whose flag was given on the command line. Where file (may be nil) set
// the field to another value, the flag wins and log (may be nil) says so
// at debug level.
func (b *Flags) Apply(cfg any, file *File, log *slog.Logger) {
	dst := structOf(cfg)
	if dst.Type() != b.shadow.Type() {
		panic(fmt.Sprintf("configfile: Apply to %s of flags bound to %s", dst.Type(), b.shadow.Type()))
	}
	for _, bf := range b.bound {
		if !b.fs.Changed(bf.name) {
			continue
		}
		fv, sv := bf.field.value(dst), bf.field.value(b.shadow)
		if file != nil && file.Set[bf.field.Key] && log != nil && !reflect.DeepEqual(fv.Interface(), sv.Interface()) {
			log.Log(context.Background(), slog.LevelDebug, "a flag overrides the config file",
				"flag", "--"+bf.name, "key", bf.field.Key, "file", file.Path,
				"file_value", display(bf.field, fv), "flag_value", display(bf.field, sv))
		}
		if sv.Kind() == reflect.Slice {
			fv.Set(reflect.ValueOf(slices.Clone(sv.Interface().([]string))))
		} else {
			fv.Set(sv)
		}
	}
}

// Changed reports whether the flag of the field with this key was given.
func (b *Flags) Changed(key string) bool {
	for _, bf := range b.bound {
		if bf.field.Key == key {
			return b.fs.Changed(bf.name)
		}
	}
	return false
}

// display is a field's value for a log line, secrets hidden.
func display(f *Field, v reflect.Value) any {
	if f.Secret != "" {
		if v.String() == "" {
			return ""
		}
		return Hidden
	}
	if v.Type() == durationType {
		return time.Duration(v.Int()).String()
	}
	if v.Kind() == reflect.String {
		return redactURL(v.String())
	}
	return v.Interface()
}
