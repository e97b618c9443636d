package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/client"
)

func newNotificationsCmd(e *env) *cobra.Command {
	var asJSON, test bool
	cmd := &cobra.Command{
		Use:   "notifications [--json] [--test]",
		Short: "List your latest notifications (the dashboard's bell), or send a test one",
		Long: `List your latest notifications, newest first, as the dashboard's bell shows them.

With --test, send yourself a test notification instead: to every browser that
subscribed to push notifications, and to the webhook ('corral webhook').
Notifications are kept by corral serve or a hub (--hub URL), not by an agent.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := e.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if test {
				if _, err := client.Do(ctx, c, api.OpPushTest, api.Empty{}); err != nil {
					return err
				}
				fmt.Fprintln(e.stderr, "a test notification is on its way to your browsers and webhook")
				return nil
			}
			list, err := client.Do(ctx, c, api.OpNotifications, api.Empty{})
			if err != nil {
				return err
			}
			if asJSON {
				return newJSON(e.stdout).Encode(list)
			}
			tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tSESSION\tREASON\tMESSAGE")
			for _, n := range list {
				name := n.SessionName
				if n.Device != "" {
					name = n.Device + "/" + name
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.Time.Local().Format(time.DateTime), safe(name), safe(n.Reason), safe(n.Message))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&test, "test", false, "send yourself a test notification")
	return cmd
}

func newWebhookCmd(e *env) *cobra.Command {
	var clear bool
	cmd := &cobra.Command{
		Use:   "webhook [URL | --clear]",
		Short: "Show, set or clear the webhook your notifications are also POSTed to",
		Long: `Show the webhook your notifications are also POSTed to (ntfy or Slack style),
set it to URL, or with --clear stop posting. It is the dashboard's Settings field.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if clear && len(args) > 0 {
				return fmt.Errorf("give a URL or --clear, not both")
			}
			var req api.SettingsRequest
			switch {
			case clear:
				req.WebhookURL = new(string)
			case len(args) == 1:
				req.WebhookURL = &args[0]
			}
			c, err := e.client()
			if err != nil {
				return err
			}
			s, err := client.Do(cmd.Context(), c, api.OpSettings, req)
			if err != nil {
				return err
			}
			if s.WebhookURL == "" {
				fmt.Fprintln(e.stderr, "no webhook")
				return nil
			}
			fmt.Fprintln(e.stdout, safe(s.WebhookURL))
			return nil
		},
	}
	cmd.Flags().BoolVar(&clear, "clear", false, "stop posting notifications to the webhook")
	return cmd
}
