// Package gitrepo runs git for corral: the status, diff and worktrees of a
// session's folder, on the machine that holds it. git runs with an argument
// list (never a shell), a timeout and a cap on what it may print, without a
// terminal prompt, a pager or optional locks (so it never takes a lock a
// person's or Claude's git needs), and with the settings that would run
// other programs on a read (fsmonitor, external diff, textconv) off.
//
// It depends on nothing of ours but api: its answers are api's types, its
// errors api.Errors.
package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

// Git runs git. The zero value is not usable; make one with New.
type Git struct {
	bin string
	env []string
}

// New returns a Git that runs bin ("" for git from env's PATH) with env
// (a session's environment: HOME and PATH matter, for the person's git
// configuration and the helpers git runs). Every GIT_ variable of env is
// dropped, so nothing points git at another repository.
func New(bin string, env []string) *Git {
	if bin == "" {
		bin = "git"
	}
	out := make([]string, 0, len(env)+8)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "PAGER" || k == "LC_ALL" || k == "LANGUAGE" {
			continue
		}
		out = append(out, kv)
	}
	out = append(out,
		"GIT_TERMINAL_PROMPT=0", // never wait on a prompt nobody sees
		"GIT_PAGER=cat", "PAGER=cat",
		"GIT_OPTIONAL_LOCKS=0",    // status must not take index.lock from Claude's git
		"GIT_LITERAL_PATHSPECS=1", // a path is a path, never a pattern
		"LC_ALL=C",                // messages corral reads are git's English ones
	)
	if bin == "git" {
		if p, err := lookPath(out); err == nil {
			bin = p
		}
	}
	return &Git{bin: bin, env: out}
}

// lookPath finds git in env's PATH, falling back to the daemon's.
func lookPath(env []string) (string, error) {
	for i := len(env) - 1; i >= 0; i-- {
		if p, ok := strings.CutPrefix(env[i], "PATH="); ok {
			for _, dir := range strings.Split(p, ":") {
				if dir == "" {
					continue
				}
				if f, err := exec.LookPath(dir + "/git"); err == nil {
					return f, nil
				}
			}
			break
		}
	}
	return exec.LookPath("git")
}

// globalArgs come before every command: no pager, raw (unquoted) paths,
// literal pathspecs, no optional locks, and nothing that runs a program
// of the repository's configuration on a read.
var globalArgs = []string{
	"--no-pager", "--no-optional-locks",
	"-c", "core.quotepath=off",
	"-c", "core.fsmonitor=false",
	"-c", "color.ui=never",
	"-c", "diff.external=",
	"-c", "log.showSignature=false",
}

// limits bound one git command.
type limits struct {
	timeout time.Duration
	// max caps stdout; past it git is stopped and the output marked cut.
	max int
	// ok are exit codes that are answers, not failures (1 of check-ignore).
	ok []int
	// patterns: the command refuses literal pathspecs (check-ignore),
	// and gets only corral's own paths.
	patterns bool
}

// Time and size limits of git commands.
const (
	quickTimeout  = 5 * time.Second
	statusTimeout = 15 * time.Second
	diffTimeout   = 30 * time.Second
	// worktreeTimeout covers checking out a big tree.
	worktreeTimeout = 2 * time.Minute
	smallOutput     = 64 << 10
	maxStderr       = 8 << 10
)

// result is what a git command printed.
type result struct {
	out  []byte
	cut  bool // stdout passed limits.max and git was stopped
	exit int
}

// Error is a git command that failed: its arguments, exit code and what it
// said. Its message is git's, which the agent passes on.
type Error struct {
	Args   []string
	Exit   int
	Stderr string
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", e.Exit)
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

// run runs git args in dir.
func (g *Git) run(ctx context.Context, dir string, lim limits, args ...string) (result, error) {
	if lim.timeout <= 0 {
		lim.timeout = quickTimeout
	}
	if lim.max <= 0 {
		lim.max = smallOutput
	}
	ctx, cancel := context.WithTimeout(ctx, lim.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.bin, append(append([]string(nil), globalArgs...), args...)...)
	cmd.Dir = dir
	cmd.Env = g.env
	if lim.patterns {
		cmd.Env = append(append([]string(nil), g.env...), "GIT_LITERAL_PATHSPECS=0")
	}
	cmd.Stdin = nil
	stderr := &capped{max: maxStderr}
	cmd.Stderr = stderr
	// Its own process group, so a timeout stops what git started too
	// (filters, hooks of worktree add).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return result{}, err
	}
	if err := cmd.Start(); err != nil {
		if _, serr := os.Stat(dir); serr == nil && errors.Is(err, fs.ErrNotExist) {
			return result{}, api.Errorf(api.CodeUnavailable, "git is not installed on this machine (%v)", err)
		}
		if _, serr := os.Stat(dir); serr != nil {
			return result{}, api.Errorf(api.CodeNotFound, "folder %s: %v", dir, serr)
		}
		return result{}, api.Errorf(api.CodeUnavailable, "git: %v", err)
	}
	out, rerr := io.ReadAll(io.LimitReader(stdout, int64(lim.max)+1))
	res := result{out: out}
	if len(out) > lim.max {
		// Enough: stop git rather than read what nobody will see.
		res.out, res.cut = out[:lim.max], true
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		io.Copy(io.Discard, stdout)
	}
	werr := cmd.Wait()
	if res.cut {
		return res, nil
	}
	if ctx.Err() == context.DeadlineExceeded {
		return res, api.Errorf(api.CodeUnavailable, "git %s took longer than %v (a very large repository?)", args[0], lim.timeout)
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if rerr != nil && werr == nil {
		werr = rerr
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		res.exit = ee.ExitCode()
		for _, c := range lim.ok {
			if c == res.exit {
				return res, nil
			}
		}
		return res, classify(&Error{Args: args, Exit: res.exit, Stderr: stderr.buf.String()})
	}
	if werr != nil && !errors.Is(werr, exec.ErrWaitDelay) {
		return res, api.Errorf(api.CodeUnavailable, "git %s: %v", args[0], werr)
	}
	return res, nil
}

// classify gives the failures corral tells apart their codes.
func classify(e *Error) error {
	msg := e.Stderr
	switch {
	case strings.Contains(msg, "not a git repository"):
		return &api.Error{Code: api.CodeNotARepository, Message: "not in a git repository"}
	case strings.Contains(msg, "dubious ownership"):
		return &api.Error{Code: api.CodeForbidden, Message: "git refuses the repository: it belongs to another user (git config safe.directory)"}
	}
	return &api.Error{Code: api.CodeConflict, Message: e.Error()}
}

// capped keeps the first max bytes written to it.
type capped struct {
	buf bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
