package agent

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

// Limits of Run.

// Run runs a command beside a session: in the directory its pane is in,
// with its environment, outside the pane, so nothing is typed into Claude.
func (a *Agent) Run(ctx context.Context, req api.RunRequest) (api.RunResult, error) {
	id := req.ID
	s, err := a.get(id)
	if err != nil {
		return api.RunResult{}, err
	}
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return api.RunResult{}, api.Errorf(api.CodeBadRequest, "no command given")
	}
	timeout := time.Duration(req.TimeoutMS) * time.Millisecond
	if timeout <= 0 {
		timeout = runDefaultTimeout
	}
	timeout = min(timeout, runMaxTimeout)
	a.mu.Lock()
	dir := s.dir
	a.mu.Unlock()
	if tm, target, err := a.panes.terminal(id); err == nil {
		if p, err := tm.PaneInfo(ctx, target); err == nil && p.Path != "" {
			dir = p.Path
		}
	}
	argv0 := req.Argv[0]
	if strings.Contains(argv0, "/") && !filepath.IsAbs(argv0) {
		argv0 = filepath.Join(dir, argv0)
	}
	bin, err := a.lookPath(argv0)
	if err != nil {
		return api.RunResult{Output: fmt.Sprintf("corral: %s: command not found\n", req.Argv[0]), ExitCode: 127}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, req.Argv[1:]...)
	cmd.Args[0] = req.Argv[0]
	cmd.Dir = dir
	cmd.Env = sessionEnv(a.cfg.Env, id)
	cmd.Stdin = nil
	out := &capped{max: runMaxOutput}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so a timeout kills the whole pipeline.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A background child may hold the pipe for ever: read it this much
	// longer after the command exits, then return.
	cmd.WaitDelay = runWaitDelay
	start := time.Now()
	err = cmd.Run()
	res := api.RunResult{Output: out.buf.String(), Truncated: out.cut, DurationMS: time.Since(start).Milliseconds()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.Is(err, exec.ErrWaitDelay):
		// The command exited 0, but a process it put in the background
		// (`cmd &`) still holds the output: keep what came, and say so.
		res.Output += fmt.Sprintf("\ncorral: the command exited, but a process it started keeps its output open; output after %v is not shown\n", runWaitDelay)
	case ctx.Err() == context.DeadlineExceeded:
		res.ExitCode = 124
		res.Output += fmt.Sprintf("\ncorral: command timed out after %v\n", timeout)
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
		if res.ExitCode < 0 {
			res.ExitCode = 128 + int(ee.Sys().(syscall.WaitStatus).Signal())
		}
	default:
		return api.RunResult{}, api.Errorf(api.CodeBadRequest, "run: %v", err)
	}
	return res, nil
}

// capped is a writer that keeps the first max bytes.

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if room <= 0 {
		c.cut = c.cut || len(p) > 0
		return len(p), nil
	}
	if len(p) > room {
		c.buf.Write(p[:room])
		c.cut = true
		return len(p), nil
	}
	return c.buf.Write(p)
}
