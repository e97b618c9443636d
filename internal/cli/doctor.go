package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/client"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/version"
)

// check is one line of `corral doctor`.
type check struct {
	name   string
	ok     bool
	detail string
	fix    string
}

func newDoctorCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check that what corral needs is installed and running, and say how to fix what is not",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 15*time.Second)
			defer cancel()
			checks := []check{{name: "corral", ok: true, detail: version.String()}}
			checks = append(checks, toolCheck(ctx, "tmux", []string{"-V"},
				"install tmux 3.2 or newer: sudo apt install tmux (Debian/Ubuntu), brew install tmux (macOS)"))
			checks = append(checks, toolCheck(ctx, "claude", []string{"--version"},
				"install Claude Code: npm install -g @anthropic-ai/claude-code (needs Node.js 18+)"))
			checks = append(checks, e.claudeDirCheck())
			dir, err := e.dir()
			if err != nil {
				checks = append(checks, check{name: "data directory", detail: err.Error(), fix: "pass --data-dir or set $CORRAL_HOME"})
			} else {
				checks = append(checks, check{name: "data directory", ok: true, detail: dir})
				if o, held := datadir.ReadOwner(dir); held {
					checks = append(checks, check{name: "daemon", ok: true, detail: fmt.Sprintf("running (pid %d)", o.PID)})
					checks = append(checks, healthChecks(ctx, dir)...)
				} else {
					checks = append(checks, check{name: "daemon", detail: "not running", fix: "corral serve"})
				}
			}
			checks = append(checks, e.serviceChecks(ctx)...)
			bad := 0
			for _, c := range checks {
				mark := "ok "
				if !c.ok {
					mark = "!! "
					bad++
				}
				fmt.Fprintf(e.stdout, "%s %-15s %s\n", mark, c.name, safe(c.detail))
				if !c.ok && c.fix != "" {
					fmt.Fprintf(e.stdout, "    fix: %s\n", safe(c.fix))
				}
			}
			if bad > 0 {
				return exitError{code: 1}
			}
			return nil
		},
	}
}

// healthChecks are what the running daemon says it cannot do right now,
// such as saving to its database.
func healthChecks(ctx context.Context, dir string) []check {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := client.Unix(datadir.Socket(dir, datadir.APISocket)).Version(ctx)
	if err != nil {
		return []check{{name: "daemon", detail: "does not answer: " + err.Error(), fix: "see its log; restart it with corral serve"}}
	}
	var out []check
	for _, p := range v.Problems {
		out = append(out, check{name: "daemon", detail: p,
			fix: "corral keeps retrying and loses nothing while it runs; check the disk space and permissions of " + dir})
	}
	return out
}

// claudeDirCheck says where corral reads Claude's session files and
// transcripts, since $CLAUDE_CONFIG_DIR moves them. The daemon reads the
// same variable from the environment it is started with.
func (e *env) claudeDirCheck() check {
	home := e.getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	dir := claude.ConfigDir(e.getenv, home)
	detail := dir
	if e.getenv("CLAUDE_CONFIG_DIR") != "" {
		detail += " (from $CLAUDE_CONFIG_DIR)"
	}
	if _, err := os.Stat(dir); err != nil {
		detail += "; not there yet, claude makes it when it first runs"
	}
	return check{name: "claude config", ok: true, detail: detail}
}

func toolCheck(ctx context.Context, name string, args []string, fix string) check {
	path, err := exec.LookPath(name)
	if err != nil {
		return check{name: name, detail: "not found in PATH", fix: fix}
	}
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	v := strings.TrimSpace(string(out))
	if i := strings.IndexByte(v, '\n'); i >= 0 {
		v = v[:i]
	}
	if err != nil {
		return check{name: name, detail: fmt.Sprintf("%s: %v %s", path, err, v), fix: fix}
	}
	return check{name: name, ok: true, detail: v + " (" + path + ")"}
}
