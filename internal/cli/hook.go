package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/claude/hooks"
	"github.com/corral-dev/corral/internal/hookwire"
)

// hookTimeout bounds a delivery (see hookwire.Timeout).
const hookTimeout = hookwire.Timeout

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

// runHookFast delivers Claude's stdin to the agent and always returns 0
// (see hookwire.Main); for the status line it then prints the person's own
// status line.
func runHookFast(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	for _, a := range args[1:] {
		if a == "-h" || a == "--help" {
			io.WriteString(stdout, "Usage: corral "+args[0]+" [--data-dir D] < payload.json\n\n"+
				"Claude Code runs this; it passes the JSON on stdin to the corral daemon.\n")
			return 0
		}
	}
	if args[0] != "statusline" {
		return hookwire.Main(hookwire.KindHook, args[1:], stdin, stderr, getenv)
	}
	// The status line needs its input twice: for the agent and for the
	// person's own status line.
	payload, _, _ := hookwire.ReadStdin(stdin)
	hookwire.Main(hookwire.KindStatusLine, args[1:], bytes.NewReader(payload), stderr, getenv)
	runUserStatusLine(payload, stdout, getenv)
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
	if home == "" && getenv("CLAUDE_CONFIG_DIR") == "" {
		return
	}
	cmdline, ok := hooks.UserStatusLine(claude.ConfigDir(getenv, home), project)
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
