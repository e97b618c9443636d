package cli

import "github.com/spf13/cobra"

func newRenameCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "rename ID NAME",
		Short: "Rename a session",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, s, err := e.session(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			_, err = c.Rename(cmd.Context(), s.ID, args[1])
			return err
		},
	}
}
