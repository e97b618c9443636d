package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/api"
)

func newKillCmd(e *env) *cobra.Command {
	var removeWorktree, force bool
	cmd := &cobra.Command{
		Use:   "kill [--remove-worktree [--force]] ID...",
		Short: "End sessions (Claude's conversation stays resumable)",
		Long: `End sessions. Claude's conversation stays resumable.

A session started in a new worktree (corral new --worktree) keeps its
worktree unless --remove-worktree is given; a worktree with uncommitted
changes or untracked files is then kept and the kill refused (naming the
files), unless --force. The branch always stays.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if force && !removeWorktree {
				return fmt.Errorf("--force goes with --remove-worktree")
			}
			c, err := e.client()
			if err != nil {
				return err
			}
			for _, ref := range args {
				s, err := resolve(cmd.Context(), c, ref)
				if err != nil {
					return err
				}
				req := api.KillRequest{SessionRef: api.SessionRef{ID: s.ID}, RemoveWorktree: removeWorktree, Force: force}
				if err := c.KillWith(cmd.Context(), req); err != nil {
					return err
				}
				if s.Worktree != nil && !removeWorktree {
					fmt.Fprintf(e.stderr, "the worktree %s (branch %s) stays; remove it with git worktree remove, or next time with corral kill --remove-worktree\n",
						safe(s.Worktree.Path), safe(s.Worktree.Branch))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&removeWorktree, "remove-worktree", false, "also remove the worktree corral made for the session (refused if it has changes)")
	cmd.Flags().BoolVar(&force, "force", false, "with --remove-worktree: remove it even with uncommitted changes, which are lost")
	return cmd
}
