package cli

import "github.com/spf13/cobra"

func newKillCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "kill ID...",
		Short: "End sessions (Claude's conversation stays resumable)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := e.client()
			if err != nil {
				return err
			}
			for _, ref := range args {
				s, err := resolve(cmd.Context(), c, ref)
				if err != nil {
					return err
				}
				if err := c.Kill(cmd.Context(), s.ID); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
