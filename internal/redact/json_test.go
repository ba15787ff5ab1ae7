package redact

import (
	"strings"
	"testing"
)

func TestJSON(t *testing.T) {
	in := `{"mcpServers":{"a":{"command":"srv","args":["--x"],"env":{"API_KEY":"sk-live-123","HOME":"${HOME}"}},` +
		`"b":{"url":"https://u:pw@h/mcp?key=k","headers":{"Authorization":"Bearer ${TOKEN}","X-Api-Key":"plain"}}},"token":"t1"}`
	out := JSON(in)
	for _, leak := range []string{"sk-live-123", "pw@", "key=k", "plain", "t1"} {
		if strings.Contains(out, leak) {
			t.Errorf("%q shows %q", out, leak)
		}
	}
	for _, keep := range []string{"${HOME}", "Bearer ${TOKEN}", `"srv"`, `"--x"`} {
		if !strings.Contains(out, keep) {
			t.Errorf("%q lost %q", out, keep)
		}
	}
	if got := JSON("not json https://u:p@h/x"); strings.Contains(got, "u:p@") {
		t.Errorf("text: %q", got)
	}
}
