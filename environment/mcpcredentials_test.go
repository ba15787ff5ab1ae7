package environment

import (
	"slices"
	"testing"

	"github.com/toolenv/toolenv/backend/mcpsource"
)

// TestInlineCredentialsAreOnlyCredentials: the warning about credentials
// written inline in an MCP server's configuration names the keys that
// hold one (by their name or their value), not a path or a mode under an
// ordinary name, nor a ${VAR} reference.
func TestInlineCredentialsAreOnlyCredentials(t *testing.T) {
	s := &mcpsource.Server{Name: "m", Command: "node",
		Env: map[string]string{
			"MEMORY_FILE_PATH": "/tmp/memory.json", "LOG_LEVEL": "debug", "ALLOWED_DIRS": "/srv:/tmp",
			"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abc", "OPENAI_API_KEY": "${OPENAI_API_KEY}",
			"DATABASE_URL": "postgres://u:pw@db/x", "SLACK_BOT_TOKEN": "xoxb-1",
		},
		Headers: map[string]string{"Authorization": "Bearer abc123def456", "X-Trace": "on", "X-Api-Key": "${KEY}"},
	}
	got := inlineCredentials(s)
	want := []string{"Authorization", "DATABASE_URL", "GITHUB_PERSONAL_ACCESS_TOKEN", "SLACK_BOT_TOKEN"}
	if !slices.Equal(got, want) {
		t.Fatalf("inline credentials %v, want %v", got, want)
	}
}
