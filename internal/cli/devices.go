package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func newDevicesCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "devices [--json]",
		Short: "List your machines (through a hub): online or not, and their keys",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := e.client()
			if err != nil {
				return err
			}
			list, err := c.Devices(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return newJSON(e.stdout).Encode(list)
			}
			if len(list) == 0 {
				fmt.Fprintln(e.stderr, "no devices: this is one machine's daemon, not a hub (use --hub URL)")
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tONLINE\tHOSTNAME\tLAST SEEN\tKEY")
			for _, d := range list {
				seen := ""
				if !d.LastSeen.IsZero() {
					seen = d.LastSeen.Local().Format(time.DateTime)
				}
				online := "no"
				if d.Online {
					online = "yes"
				}
				if d.Conflict != nil {
					online += " (another machine uses its key)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", safe(d.Name), online, safe(d.Hostname), seen, safe(d.Key))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newDirsCmd(e *env) *cobra.Command {
	var asJSON bool
	var device string
	cmd := &cobra.Command{
		Use:   "dirs [PATH] [--device D] [--json]",
		Short: "List a directory inside a machine's roots (--root), as the directory picker does",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if len(args) == 1 {
				path = args[0]
			}
			c, err := e.client()
			if err != nil {
				return err
			}
			l, err := c.ListDir(cmd.Context(), device, path)
			if err != nil {
				return err
			}
			if asJSON {
				return newJSON(e.stdout).Encode(l)
			}
			for _, d := range l.Entries {
				if d.IsDir {
					fmt.Fprintln(e.stdout, safe(d.Path)+"/")
				} else {
					fmt.Fprintln(e.stdout, safe(d.Path))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&device, "device", "", "the machine (with --hub; default: the only one online)")
	return cmd
}

func newViewedCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "viewed ID",
		Short: "Mark a session as seen: review becomes idle",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, s, err := e.session(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return c.Viewed(cmd.Context(), s.ID)
		},
	}
}
