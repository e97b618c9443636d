package hookwire

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/proc"
)

// Timeout bounds a delivery when the agent is slow or stuck; with no agent
// at all the connect fails at once.
const Timeout = 500 * time.Millisecond

// Main is `corral-hook [--data-dir D]` (and `corral hook`): it delivers the
// hook payload on stdin to the agent and returns 0 whatever happens. A hook
// must never fail or block Claude: it prints nothing on stdout (Claude adds
// the stdout of SessionStart and UserPromptSubmit hooks to the model's
// context), and a panic, which would exit 2 ("block this tool"), is caught.
func Main(kind string, args []string, stdin io.Reader, stderr io.Writer, getenv func(string) string) (code int) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "corral %s: internal error: %v\n", kind, r)
			code = 0
		}
	}()
	var dirFlag string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--data-dir" && i+1 < len(args):
			dirFlag = args[i+1]
			i++
		case strings.HasPrefix(a, "--data-dir="):
			dirFlag = strings.TrimPrefix(a, "--data-dir=")
		}
	}
	payload, truncated, _ := ReadStdin(stdin)
	dir, err := datadir.Resolve(dirFlag, getenv)
	if err != nil {
		return 0
	}
	h := HeaderFromEnv(kind, start, getenv)
	h.Truncated = truncated
	// Claude runs exec-form hooks itself, a shell-form one through sh: its
	// pid is one or two generations up.
	if p, ok := proc.ClaudeAncestor(os.Getppid(), 3); ok {
		h.ClaudePID, h.ClaudeStart = p.PID, p.StartTime
	}
	_ = Send(datadir.Socket(dir, datadir.HookSocket), h, payload, Timeout)
	return 0
}
