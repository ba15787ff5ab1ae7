// Package buildinfo says which toolenv made a result: its version from
// the module build information (or a version set at link time), the VCS
// revision it was built from, and the Go toolchain.
package buildinfo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/redact"
)

// Linked is a version set at link time with
// -ldflags "-X github.com/toolenv/toolenv/internal/buildinfo.Linked=v1.2.3";
// it wins over the module's version.
var Linked string

// Info describes the running toolenv.
type Info struct {
	// Version is the module version ("v1.2.3", a pseudo-version, or
	// "(devel)" for a build from a checkout), or Linked when set.
	Version string `json:"version"`
	// Revision is the VCS commit the binary was built from, when known;
	// Modified says the checkout had uncommitted changes.
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// Go is the toolchain version.
	Go string `json:"go"`
}

var (
	once sync.Once
	info Info

	exeOnce sync.Once
	exeSum  string
	exeErr  error
)

// Executable returns the SHA-256 (hex) of the running program's file: an
// identity of the code that changes with any change to it, committed or
// not, where Version stays "(devel)" and Modified only says "dirty". It
// is read once per process.
func Executable() (string, error) {
	exeOnce.Do(func() {
		exeSum, exeErr = fileSum()
	})
	return exeSum, exeErr
}

func fileSum() (string, error) {
	path, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the running program: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read the running program: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read the running program %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Read returns the build information of the running program.
func Read() Info {
	once.Do(func() {
		info = Info{Version: "(devel)", Go: runtime.Version()}
		bi, ok := debug.ReadBuildInfo()
		if ok {
			if v := bi.Main.Version; v != "" {
				info.Version = v
			}
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					info.Revision = s.Value
				case "vcs.time":
					info.Time = s.Value
				case "vcs.modified":
					info.Modified = s.Value == "true"
				}
			}
		}
		if Linked != "" {
			info.Version = Linked
		}
	})
	return info
}

// Version returns a one-word version: the module version, followed by
// the short revision (and "+dirty") for a build from a checkout:
// "(devel)-a44554c+dirty".
func Version() string {
	i := Read()
	v := i.Version
	if v == "(devel)" && i.Revision != "" {
		r := i.Revision
		if len(r) > 12 {
			r = r[:12]
		}
		v = "(devel)-" + r
		if i.Modified {
			v += "+dirty"
		}
	}
	return v
}

// String is the line toolenv version prints.
func (i Info) String() string {
	s := "toolenv " + i.Version
	if i.Revision != "" {
		s += " (" + i.Revision
		if i.Time != "" {
			s += ", " + i.Time
		}
		if i.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s + " " + i.Go
}

// Provenance returns the provenance of a result made now by this
// program: its version, revision and toolchain, with the command line and
// the effective configuration given (either may be nil). The command
// line is redacted (redact.Args), and so are the string values of a
// map[string]any configuration (redact.Value).
func Provenance(command []string, config any) *toolenv.Provenance {
	i := Read()
	if m, ok := config.(map[string]any); ok {
		red := make(map[string]any, len(m))
		for k, v := range m {
			switch x := v.(type) {
			case string:
				v = redact.Value(x)
			case []string:
				v = redact.Args(x)
			}
			red[k] = v
		}
		config = red
	}
	if command != nil {
		command = redact.Args(command)
	}
	return &toolenv.Provenance{Version: Version(), Revision: i.Revision, Go: i.Go, Command: command, Config: config}
}
