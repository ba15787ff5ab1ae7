package tasksession_test

import (
	"github.com/toolenv/toolenv/server"
	"github.com/toolenv/toolenv/tasksession"
)

// Sessions is the HTTP server's session issuer for a fleet.
var _ server.SessionIssuer = (*tasksession.Sessions)(nil)
