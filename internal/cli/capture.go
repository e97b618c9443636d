package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
)

func newCaptureCmd(e *env) *cobra.Command {
	var history int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "capture ID",
		Short: "Print a session's screen",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := e.client()
			if err != nil {
				return err
			}
			s, err := resolve(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			scr, err := c.Capture(cmd.Context(), s.ID, history)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(e.stdout).Encode(scr)
			}
			_, err = fmt.Fprint(e.stdout, scr.Text)
			return err
		},
	}
	cmd.Flags().IntVar(&history, "history", 0, "also print this many lines of scrollback")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON with size and cursor")
	return cmd
}
