// Command corral-hook delivers a Claude Code hook payload to the corral
// agent. Claude runs it, without a shell, for every hook event and waits for
// it, so it is a binary of its own: a few packages, no database, no web UI,
// quick to start. `corral hook` does the same thing from the full binary.
package main

import (
	"os"

	"github.com/corral-dev/corral/internal/hookwire"
)

func main() {
	os.Exit(hookwire.Main(hookwire.KindHook, os.Args[1:], os.Stdin, os.Stderr, os.Getenv))
}
