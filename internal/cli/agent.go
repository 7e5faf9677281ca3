package cli

import (
	"fmt"
	"os"

	"github.com/popmon/popmon/internal/session"
)

// agentMain runs the node agent (popmon agent LIVE_DIR SESSION, not a user
// command: session.RunAgent); its stdio is /dev/null and nobody waits for
// it, so it reports nothing and returns the exit code.
func agentMain(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "popmon agent: not a user command (libpopmon starts it on the nodes of a popmon run)")
		return ExitUsage
	}
	session.RunAgent(args[0], args[1])
	return ExitOK
}
