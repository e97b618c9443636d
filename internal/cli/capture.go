package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/termsafe"
)

func newCaptureCmd(e *env) *cobra.Command {
	var history int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "capture ID",
		Short: "Print a session's screen",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, s, err := e.session(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			scr, err := c.Capture(cmd.Context(), s.ID, history)
			if err != nil {
				return err
			}
			if asJSON {
				return newJSON(e.stdout).Encode(scr)
			}
			// tmux renders the screen as text, but the text comes from the
			// daemon or a hub: keep only newlines and tabs raw.
			_, err = fmt.Fprint(e.stdout, termsafe.Text(scr.Text))
			return err
		},
	}
	cmd.Flags().IntVar(&history, "history", 0, "also print this many lines of scrollback")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON with size and cursor")
	return cmd
}
