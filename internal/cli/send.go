package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/api"
)

func newSendCmd(e *env) *cobra.Command {
	var noEnter, clearDraft bool
	cmd := &cobra.Command{
		Use:   "send ID TEXT...",
		Short: "Type a prompt into Claude's input box, then press Enter (TEXT - reads stdin)",
		Long: `Type text into a session's input box, then press Enter. corral looks at the screen first
and types nothing while a dialog is open (dialog_open: answer it with ` + "`corral answer`" + `),
while Claude's input box holds a draft typed elsewhere (draft_present: --clear-draft replaces
it), or when it cannot see the input box (screen_unclear).`,
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
			c, s, err := e.session(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return c.Input(cmd.Context(), s.ID, api.InputRequest{Text: text, Enter: !noEnter, ClearDraft: clearDraft})
		},
	}
	cmd.Flags().BoolVar(&noEnter, "no-enter", false, "type the text without pressing Enter")
	cmd.Flags().BoolVar(&clearDraft, "clear-draft", false, "replace a draft left in Claude's input box")
	return cmd
}
