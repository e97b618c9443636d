package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/api"
)

func newLsCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "ls [--json]",
		Aliases: []string{"list"},
		Short:   "List sessions and what each is doing",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := e.client()
			if err != nil {
				return err
			}
			list, err := c.Sessions(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				if list == nil {
					list = []api.Session{}
				}
				enc := newJSON(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			if len(list) == 0 {
				fmt.Fprintln(e.stderr, "no sessions; start one with `corral new`")
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
			hasDevice := false
			for _, s := range list {
				hasDevice = hasDevice || s.Device != ""
			}
			if hasDevice {
				fmt.Fprint(tw, "DEVICE\t")
			}
			fmt.Fprintln(tw, "ID\tNAME\tSTATUS\tFOR\tDIR\tDOING")
			now := time.Now()
			for _, s := range list {
				if hasDevice {
					fmt.Fprintf(tw, "%s\t", safe(s.Device))
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", safe(s.ID), safe(s.Name), statusWord(s), since(s, now), safe(s.Dir), doing(s))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (an array of sessions)")
	return cmd
}

func statusWord(s api.Session) string {
	w := safe(string(s.Status))
	if s.Error != "" {
		w += " (error: " + safe(s.Error) + ")"
	}
	if s.Compacting {
		w += " (compacting)"
	}
	return w
}

func since(s api.Session, now time.Time) string {
	t := s.UpdatedAt
	if s.Status == api.StatusBusy && !s.BusySince.IsZero() {
		t = s.BusySince
	}
	if t.IsZero() {
		return ""
	}
	return now.Sub(t).Truncate(time.Second).String()
}

func doing(s api.Session) string {
	var out string
	switch {
	case s.WaitingFor != nil:
		out = s.WaitingFor.Describe()
	case s.CurrentTool != "":
		out = s.CurrentTool
	default:
		out = s.LastMessage
	}
	out = safe(strings.Join(strings.Fields(out), " "))
	if len(out) > 60 {
		r := []rune(out)
		if len(r) > 60 {
			out = string(r[:59]) + "…"
		}
	}
	return out
}
