package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/api"
)

func newWatchCmd(e *env) *cobra.Command {
	var asJSON bool
	var since uint64
	cmd := &cobra.Command{
		Use:   "watch [--json]",
		Short: "Stream status changes as they happen",
		Long: `Stream status changes. With --json each line is one event: first a
"snapshot" with every session, then "session" events (a session changed; prev
is its status before) and "removed" events, each with a sequence number (seq).
A "resync" event means the reader fell behind and a fresh snapshot follows.
Pass --since SEQ to resume after the last event you saw.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := e.client()
			if err != nil {
				return err
			}
			enc := newJSON(e.stdout)
			err = c.StreamEvents(cmd.Context(), since, func(ev api.Event) error {
				if asJSON {
					return enc.Encode(ev)
				}
				printEvent(e, ev)
				return nil
			})
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON event per line")
	cmd.Flags().Uint64Var(&since, "since", 0, "resume after this sequence number")
	return cmd
}

func printEvent(e *env, ev api.Event) {
	ts := ev.Time.Local().Format(time.TimeOnly)
	switch ev.Type {
	case api.EventSnapshot:
		for _, s := range ev.Sessions {
			fmt.Fprintf(e.stdout, "%s  %-12s %-16s %s\n", ts, safe(s.ID), safe(s.Name), statusWord(s))
		}
	case api.EventSession:
		s := ev.Session
		if s == nil {
			return
		}
		if ev.Prev == s.Status {
			return // a detail changed, not the status
		}
		line := fmt.Sprintf("%s  %-12s %-16s %s -> %s", ts, safe(s.ID), safe(s.Name), safe(string(ev.Prev)), statusWord(*s))
		if d := doing(*s); d != "" {
			line += "  " + d
		}
		fmt.Fprintln(e.stdout, line)
	case api.EventRemoved:
		fmt.Fprintf(e.stdout, "%s  %-12s removed\n", ts, safe(ev.ID))
	case api.EventResync:
		fmt.Fprintf(e.stdout, "%s  (fell behind; resynchronising)\n", ts)
	}
}
