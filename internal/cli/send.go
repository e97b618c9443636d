package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"
)

func newSendCmd(e *env) *cobra.Command {
	var noEnter bool
	cmd := &cobra.Command{
		Use:   "send ID TEXT...",
		Short: "Type text into a session, then press Enter (TEXT - reads stdin)",
		Example: `  corral send app "fix the failing test"
  git diff | corral send app -`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			text := strings.Join(args[1:], " ")
			if len(args) == 2 && args[1] == "-" {
				b, err := io.ReadAll(io.LimitReader(e.stdin, 1<<20))
				if err != nil {
					return err
				}
				text = strings.TrimRight(string(b), "\n")
			}
			c, err := e.client()
			if err != nil {
				return err
			}
			s, err := resolve(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			return c.SendText(cmd.Context(), s.ID, text, !noEnter)
		},
	}
	cmd.Flags().BoolVar(&noEnter, "no-enter", false, "type the text without pressing Enter")
	return cmd
}
