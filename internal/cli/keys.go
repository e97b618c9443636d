package cli

import "github.com/spf13/cobra"

func newKeysCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "keys ID KEY...",
		Short: "Press raw keys in a session (tmux key names: Enter Escape Tab Up Down 1 y C-c ...)",
		Long: `Press keys in a session exactly as given. This is the escape hatch: unlike send and
answer, it does not look at the screen first, so a key lands in whatever is open there,
a dialog included. To answer a dialog use ` + "`corral answer`" + `; to type a prompt, ` + "`corral send`" + `.`,
		Example: `  corral keys app Escape
  corral keys app C-c
  corral keys app Down Enter`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, s, err := e.session(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return c.SendKeys(cmd.Context(), s.ID, args[1:]...)
		},
	}
}
