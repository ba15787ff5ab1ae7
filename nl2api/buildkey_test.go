package nl2api

import (
	"encoding/hex"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/toolenv/toolenv/backend/sqltools/rodb"
	"github.com/toolenv/toolenv/nl2api/nl2apitest"
)

// keyed changes each option that shapes the output; unkeyed each that
// does not. TestBuildKeyCoversOptions fails for a field of Options in
// neither, so a new option is classified before a build can be reused
// across it.
var (
	keyed = map[string]func(*Options){
		"DBs":            func(o *Options) { o.DBs = []string{"x"} },
		"Flavors":        func(o *Options) { o.Flavors = []string{Rest, Slot} },
		"Obfuscate":      func(o *Options) { o.Obfuscate = !o.Obfuscate },
		"Seed":           func(o *Options) { o.Seed++ },
		"Shrink":         func(o *Options) { o.Shrink = []int{50} },
		"Workers":        func(o *Options) { o.Workers++ },
		"CallTimeout":    func(o *Options) { o.CallTimeout += time.Nanosecond },
		"MaxCallTimeout": func(o *Options) { o.MaxCallTimeout += time.Nanosecond },
		"Writes":         func(o *Options) { o.Writes = !o.Writes },
		"WriteTasks":     func(o *Options) { o.WriteTasks++ },
		// The same folder spelled otherwise: messages name it as given.
		"Data": func(o *Options) { o.Data = o.Data + string(filepath.Separator) + "." },
		// One level deeper: collections name their databases relative
		// to their folder.
		"Out": func(o *Options) { o.Out = filepath.Join(o.Out, "deeper") },
	}
	unkeyed = map[string]func(*Options){
		"Progress":   func(o *Options) { o.Progress = func(Progress) {} },
		"Logger":     func(o *Options) { o.Logger = slog.Default() },
		"ImageCache": func(o *Options) { o.ImageCache = &rodb.DiskCache{Dir: "elsewhere"} },
		"BuildCache": func(o *Options) { o.BuildCache = &BuildCache{Dir: "elsewhere"} },
		"Command":    func(o *Options) { o.Command = []string{"toolenv", "build", "bird"} },
		// A sibling folder: the same path to the data.
		"Out sibling": func(o *Options) { o.Out = filepath.Join(filepath.Dir(o.Out), "other") },
	}
)

func TestBuildKeyCoversOptions(t *testing.T) {
	typ := reflect.TypeOf(Options{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		if keyed[f.Name] == nil && unkeyed[f.Name] == nil {
			t.Errorf("Options.%s is neither in the build cache's key nor said not to shape the output: add it to buildKey (and keyed) or to unkeyed", f.Name)
		}
	}
}

// TestBuildKeyChangesWithEveryInput: changing any one byte of any file of
// the --data folder (at positions drawn from a seeded generator), adding,
// removing or renaming a file, any option that shapes the output, or the
// program changes the key; options that do not shape it leave it.
func TestBuildKeyChangesWithEveryInput(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "bird")
	if _, err := nl2apitest.Generate(data, nl2apitest.Options{Seed: 9, Databases: 2}); err != nil {
		t.Fatal(err)
	}
	base := Options{Data: data, Out: filepath.Join(root, "out", "bird")}
	base.defaults()
	key := func(o Options, identity string) string {
		t.Helper()
		k, err := buildKey(&o, identity)
		if err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(k[:])
	}
	want := key(base, "prog")
	if again := key(base, "prog"); again != want {
		t.Fatalf("the same inputs give keys %s and %s", want, again)
	}
	seen := map[string]string{want: "the base"}
	differs := func(what, k string) {
		t.Helper()
		if prev, ok := seen[k]; ok {
			t.Errorf("%s gives the key of %s", what, prev)
			return
		}
		seen[k] = what
	}
	differs("another program", key(base, "prog2"))
	for name, change := range keyed {
		o := base
		change(&o)
		differs("option "+name, key(o, "prog"))
	}
	for name, change := range unkeyed {
		o := base
		change(&o)
		if k := key(o, "prog"); k != want {
			t.Errorf("option %s, which does not shape the output, changes the key", name)
		}
	}
	r := rand.New(rand.NewPCG(9, 31))
	var files []string
	filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if len(files) < 5 {
		t.Fatalf("the generated corpus holds %d files", len(files))
	}
	for _, p := range files {
		orig, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(data, p)
		for range 3 {
			b := append([]byte(nil), orig...)
			i := r.IntN(len(b))
			b[i] ^= byte(1 + r.IntN(255))
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if key(base, "prog") == want {
				t.Errorf("%s with byte %d changed keeps the key", rel, i)
			}
		}
		if err := os.WriteFile(p, append(orig, 0), 0o644); err != nil {
			t.Fatal(err)
		}
		differs(rel+" one byte longer", key(base, "prog"))
		if err := os.Rename(p, p+".moved"); err != nil {
			t.Fatal(err)
		}
		differs(rel+" renamed", key(base, "prog"))
		if err := os.Remove(p + ".moved"); err != nil {
			t.Fatal(err)
		}
		differs(rel+" removed", key(base, "prog"))
		if err := os.WriteFile(p, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		if k := key(base, "prog"); k != want {
			t.Fatalf("%s restored, the key is not the base's", rel)
		}
	}
	if err := os.WriteFile(filepath.Join(data, "extra.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	differs("an empty file added", key(base, "prog"))
}
