package mcpsource

import (
	"runtime"
	"sort"
	"strings"
)

// inheritedEnv are the variables of toolenv's own environment a stdio
// server is started with, beside the ones its configuration names: what
// a program needs to find its commands, its home and its language, and
// nothing that can hold a credential. On Unix these are the ones the MCP
// TypeScript SDK's StdioClientTransport passes (HOME, LOGNAME, PATH,
// SHELL, TERM, USER) plus the locale, the time zone and the temporary
// folder; on Windows, the SDK's list plus the same.
var inheritedEnv = map[string][]string{
	"unix": {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LANGUAGE", "TZ", "TMPDIR"},
	"windows": {"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE",
		"SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE", "PROGRAMFILES", "LANG", "TZ"},
}

// InheritedEnv reports whether a stdio MCP server started by toolenv
// gets the variable name from toolenv's own environment: one of the
// minimal set (PATH, HOME, USER, LOGNAME, SHELL, TERM, TMPDIR, TZ) or a
// locale variable (LANG, LANGUAGE, LC_*). Every other variable —
// toolenv's bearer token, OPENAI_API_KEY, a token meant for another
// server — reaches the server only when its configuration's "env" names
// it ("OPENAI_API_KEY": "${OPENAI_API_KEY}").
func InheritedEnv(name string) bool {
	list := inheritedEnv["unix"]
	if runtime.GOOS == "windows" {
		list = inheritedEnv["windows"]
		name = strings.ToUpper(name)
	}
	for _, n := range list {
		if n == name {
			return true
		}
	}
	return strings.HasPrefix(name, "LC_")
}

// childEnv is the environment a stdio server starts with: the variables
// of environ (KEY=VALUE, as os.Environ returns them) that InheritedEnv
// keeps, then the configuration's own (which win), in sorted order.
func childEnv(environ []string, configured map[string]string) []string {
	var env []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !InheritedEnv(k) || strings.HasPrefix(v, "() {") { // a shell function exported by bash
			continue
		}
		if _, over := configured[k]; over {
			continue
		}
		env = append(env, kv)
	}
	keys := make([]string, 0, len(configured))
	for k := range configured {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+configured[k])
	}
	return env
}
