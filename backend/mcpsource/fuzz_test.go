package mcpsource

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParseFlag: any --mcp-server value is a valid server or an error,
// never a panic; a valid one prints without the URL's secrets.
func FuzzParseFlag(f *testing.F) {
	for _, s := range []string{"mem=npx -y @modelcontextprotocol/server-memory", "api=https://u:p@h/mcp?key=k", `fs=node "a b" 'c'`, "x=", "=y", "a=\"", "n=http://", "é=cmd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		s, err := ParseFlag(v)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("ParseFlag returned an invalid server: %v", err)
		}
		if s.URL != "" && strings.Contains(s.String(), "u:p@") {
			t.Fatalf("String shows user info: %s", s)
		}
	})
}

// FuzzParseConfig: any mcpServers document gives valid servers, sorted
// by name, or an error; never a panic.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers":{"a":{"command":"x","args":["y"],"env":{"K":"v"}}}}`,
		`{"mcpServers":{"b":{"url":"https://h/mcp","headers":{"A":"Bearer ${T}"}},"a":{"command":"c","disabled":true}}}`,
		`{"servers":{"v":{"type":"stdio","command":"c"}}}`, `{"mcpServers":[]}`, `{}`, `null`, `{"mcpServers":{"a":{"url":5}}}`,
		`{"mcpServers":{"m":{"command":"c","env":{"F":"${TOOLENV_EPISODE_DIR}/m.jsonl"},"isolation":"episode"}}}`,
		`{"mcpServers":{"m":{"command":"c","isolation":{"mode":"episode","pool":3,"max":2}}}}`,
		`{"mcpServers":{"h":{"url":"https://h/mcp","isolation":{"reset":{"url":"https://h/reset","method":"PUT","headers":{"K":"${K}"},"body":{"a":1}}}}}}`,
		`{"mcpServers":{"h":{"url":"https://h/mcp","isolation":{"reset":{"tool":"reset","arguments":{"x":1}},"keep":true}}}}`,
		`{"mcpServers":{"m":{"command":"c","isolation":{"pool_size":1}}}}`, `{"mcpServers":{"m":{"command":"c","isolation":5}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, err := ParseConfig(data)
		if err != nil {
			return
		}
		for i, s := range servers {
			if err := s.Validate(); err != nil {
				t.Fatalf("invalid server: %v", err)
			}
			if i > 0 && servers[i-1].Name >= s.Name {
				t.Fatalf("not sorted: %s, %s", servers[i-1].Name, s.Name)
			}
		}
	})
}

// FuzzToolLists: any document either fails, or gives named lists that
// NewCollection turns into valid collections (tools it cannot serve left
// out with a reason), never a panic.
func FuzzToolLists(f *testing.F) {
	tool := `{"name":"get","inputSchema":{"type":"object","properties":{"q":{"type":"string","pattern":"(?=x)"}}},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`
	for _, s := range []string{
		`{"tools":[` + tool + `]}`, `[` + tool + `]`, `{"mcpServers":{"a":{"command":"c","tools":[` + tool + `]}}}`,
		`[{"name":"x","tools":{"s":{"tools":[` + tool + `]}}}]`, `{"tools":[{"name":"a.b/c","inputSchema":{"type":"object","$ref":"#/x"}}]}`,
		`{"tools":[{"name":"n","inputSchema":{"type":"array"}},{"name":"n"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lists, err := ParseToolLists(data, "def")
		if err != nil {
			return
		}
		for _, l := range lists {
			c, skipped, err := NewCollection(l.Name, l.Tools, CollectionOptions{})
			if err != nil {
				if !nameRE.MatchString(l.Name) {
					continue
				}
				t.Fatalf("list %q: %v", l.Name, err)
			}
			if len(c.Tools)+len(skipped) < len(l.Tools) {
				t.Fatalf("%d tools, %d served, %d skipped", len(l.Tools), len(c.Tools), len(skipped))
			}
			if _, err := json.Marshal(c.Tools); err != nil {
				t.Fatalf("tools do not encode: %v", err)
			}
		}
	})
}
