package cli

import (
	"fmt"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func newResumableCmd(e *env) *cobra.Command {
	var asJSON bool
	var device string
	cmd := &cobra.Command{
		Use:   "resumable [DIR]",
		Short: "List the earlier Claude sessions of a directory that can be resumed",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if device == "" {
				if abs, err := filepath.Abs(dir); err == nil {
					dir = abs
				}
			}
			c, err := e.client()
			if err != nil {
				return err
			}
			list, err := c.Resumable(cmd.Context(), device, dir)
			if err != nil {
				return err
			}
			if asJSON {
				return newJSON(e.stdout).Encode(list)
			}
			if len(list) == 0 {
				fmt.Fprintf(e.stderr, "no Claude sessions recorded for %s\n", safe(dir))
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tLAST ACTIVITY\tSIZE\tFIRST PROMPT")
			for _, r := range list {
				p := []rune(safe(r.FirstPrompt))
				if len(p) > 60 {
					p = append(p[:59], '…')
				}
				fmt.Fprintf(tw, "%s\t%s\t%d KiB\t%s\n", safe(r.ID), r.LastActivity.Local().Format(time.DateTime), (r.Size+1023)/1024, string(p))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&device, "device", "", "the device whose directory this is (with --hub)")
	return cmd
}
