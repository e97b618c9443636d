package cli

import "github.com/spf13/cobra"

func newKeysCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "keys ID KEY...",
		Short: "Press keys in a session (tmux key names: Enter Escape Tab Up Down 1 y C-c ...)",
		Example: `  corral keys app Escape
  corral keys app 1            # pick option 1 of a permission prompt
  corral keys app Down Enter`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := e.client()
			if err != nil {
				return err
			}
			s, err := resolve(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			return c.SendKeys(cmd.Context(), s.ID, args[1:]...)
		},
	}
}
