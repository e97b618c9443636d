package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/hook"
	"github.com/corral-dev/corral/internal/proc"
)

// hookTimeout bounds a delivery when the agent is slow or stuck; with no
// agent at all the connect fails at once.
const hookTimeout = 500 * time.Millisecond

// newHookCmd documents `corral hook` and `corral statusline` in --help.
// Claude's calls never get here: Main takes them on a fast path.
func newHookCmd(e *env, name, short string) *cobra.Command {
	return &cobra.Command{
		Use:                name + " [--data-dir D]",
		Short:              short,
		Hidden:             false,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := runHookFast(append([]string{name}, args...), e.stdin, e.stdout, e.stderr, e.getenv); code != 0 {
				return exitError{code: code}
			}
			return nil
		},
	}
}

// runHookFast delivers Claude's stdin to the agent and always returns 0:
// a hook must never fail or block Claude, whatever happens to corral.
//
// It prints nothing on stdout for hooks: Claude adds the stdout of
// SessionStart and UserPromptSubmit hooks to the model's context. A panic
// would exit 2, which Claude treats as "block this tool", so it is caught.
func runHookFast(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) (code int) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "corral %s: internal error: %v\n", args[0], r)
			code = 0
		}
	}()
	kind := hook.KindHook
	if args[0] == "statusline" {
		kind = hook.KindStatusLine
	}
	var dirFlag string
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--data-dir" && i+1 < len(args):
			dirFlag = args[i+1]
			i++
		case strings.HasPrefix(a, "--data-dir="):
			dirFlag = strings.TrimPrefix(a, "--data-dir=")
		case a == "-h" || a == "--help":
			io.WriteString(stdout, "Usage: corral "+args[0]+" [--data-dir D] < payload.json\n\n"+
				"Claude Code runs this; it passes the JSON on stdin to the corral daemon.\n")
			return 0
		}
	}
	payload, truncated, _ := hook.ReadStdin(stdin)
	if dir, err := datadir.Resolve(dirFlag, getenv); err == nil {
		h := hook.HeaderFromEnv(kind, start, getenv)
		h.Truncated = truncated
		if p, ok := proc.ClaudeAncestor(os.Getppid(), 3); ok {
			h.ClaudePID, h.ClaudeStart = p.PID, p.StartTime
		}
		_ = hook.Send(datadir.Socket(dir, datadir.HookSocket), h, payload, hookTimeout)
	}
	if kind == hook.KindStatusLine {
		runUserStatusLine(payload, stdout, getenv)
	}
	return 0
}

// runUserStatusLine runs the person's own statusLine command, if they have
// one, with the same input, and prints its output: corral's status line
// must look exactly like theirs.
func runUserStatusLine(payload []byte, stdout io.Writer, getenv func(string) string) {
	var in struct {
		Cwd       string `json:"cwd"`
		Workspace struct {
			ProjectDir string `json:"project_dir"`
		} `json:"workspace"`
	}
	_ = json.Unmarshal(payload, &in)
	project := in.Workspace.ProjectDir
	if project == "" {
		project = in.Cwd
	}
	home := getenv("HOME")
	if home == "" {
		return
	}
	cmdline, ok := claude.UserStatusLine(home, project)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", cmdline)
	cmd.Stdin = bytes.NewReader(payload)
	cmd.Stdout = stdout
	cmd.Stderr = io.Discard
	if in.Cwd != "" {
		cmd.Dir = in.Cwd
	}
	cmd.Env = os.Environ()
	_ = cmd.Run()
}
