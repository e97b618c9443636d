package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/api"
)

type newFlags struct {
	dir, name, resume string
	worktree, base    string
	shell, asJSON     bool
	wait              time.Duration
}

func newNewCmd(e *env) *cobra.Command {
	var f newFlags
	cmd := &cobra.Command{
		Use:   "new [--dir D] [--name N] [--resume ID | --worktree BRANCH [--base REF]] [--shell] [-- CLAUDE ARGS...]",
		Short: "Start a session running Claude (or a shell) and print its id",
		Example: `  corral new --dir ~/src/app
  corral new --dir ~/src/app --resume 3f2a... 
  corral new --dir ~/src/app --worktree fix/login --base main
  corral new --shell --name scratch
  corral new -- --model sonnet`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := f.dir
			if dir == "" {
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				dir = wd
			}
			// The daemon may run elsewhere (another cwd, a hub): send an
			// absolute path. A hub-side path is taken as given.
			if e.hubURL == "" && e.getenv("CORRAL_HUB") == "" {
				abs, err := filepath.Abs(dir)
				if err != nil {
					return err
				}
				dir = abs
			}
			if f.shell && (f.resume != "" || len(args) > 0) {
				return fmt.Errorf("--shell cannot be combined with --resume or claude arguments")
			}
			if f.base != "" && f.worktree == "" {
				return fmt.Errorf("--base goes with --worktree")
			}
			if f.worktree != "" && f.resume != "" {
				return fmt.Errorf("--worktree cannot be combined with --resume: a new worktree has no conversation")
			}
			c, err := e.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			req := api.CreateRequest{Dir: dir, Name: f.name, Resume: f.resume, Shell: f.shell, Args: args}
			if f.worktree != "" {
				req.Worktree = &api.NewWorktree{Branch: f.worktree, Base: f.base}
			}
			s, err := c.Create(ctx, req)
			if err != nil {
				return err
			}
			if f.wait > 0 && !f.shell {
				s, err = waitStarted(ctx, c, s.ID, f.wait)
				if err != nil {
					return err
				}
			}
			if f.asJSON {
				return newJSON(e.stdout).Encode(s)
			}
			fmt.Fprintln(e.stdout, safe(s.ID))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", "", "working directory (default: the current one)")
	fl.StringVar(&f.name, "name", "", "name to show (default: the directory's name)")
	fl.StringVar(&f.resume, "resume", "", "resume this Claude session id")
	fl.BoolVar(&f.shell, "shell", false, "run a plain shell instead of Claude")
	fl.StringVar(&f.worktree, "worktree", "", "start in a new git worktree of --dir's repository, on this new branch (docs/git.md)")
	fl.StringVar(&f.base, "base", "", "with --worktree: the branch, tag or commit the new branch starts from (default: HEAD)")
	fl.BoolVar(&f.asJSON, "json", false, "print the new session as JSON")
	fl.DurationVar(&f.wait, "wait", 0, "wait up to this long until Claude is up (status no longer starting)")
	return cmd
}
