package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/api"
)

func newAnswerCmd(e *env) *cobra.Command {
	var text, dialog string
	cmd := &cobra.Command{
		Use:   "answer ID [OPTION... | yes | no | always] [--text TEXT]",
		Short: "Answer the dialog a session shows (a permission, a question, a plan, trust...)",
		Long: `Answer the dialog a session waits on, by the number of an option as the dialog shows
it, by yes / no / always (the option that says so), by several numbers for a question that
takes several, or with --text where the dialog takes text ("Type something", or "No, and
tell Claude what to do differently"). The answer names the dialog it is for (--dialog, by
default the one ` + "`corral ls`" + ` shows now): if the screen has moved on to another dialog,
nothing is pressed and the answer is refused (stale_dialog).`,
		Example: `  corral answer app yes
  corral answer app 2
  corral answer app 1 3                 # several options of a multi-select question
  corral answer app --text "use SQLite"  # the dialog's text option
  corral answer app 3 --text "run the tests first"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, s, err := e.session(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			req := api.AnswerRequest{Dialog: dialog, Text: text}
			for _, a := range args[1:] {
				switch strings.ToLower(a) {
				case "yes", "no", "always", "y", "n", "a":
					if req.Choice != "" || len(req.Options) > 0 {
						return fmt.Errorf("give one answer: an option number, several numbers, or yes/no/always")
					}
					req.Choice = strings.ToLower(a)
				default:
					n, err := strconv.Atoi(a)
					if err != nil || n < 1 {
						return fmt.Errorf("%q is not an option number or yes/no/always", a)
					}
					if req.Choice != "" {
						return fmt.Errorf("give one answer: an option number, several numbers, or yes/no/always")
					}
					req.Options = append(req.Options, n)
				}
			}
			if len(req.Options) == 1 {
				req.Option, req.Options = req.Options[0], nil
			}
			if req.Choice == "" && req.Option == 0 && len(req.Options) == 0 && req.Text == "" {
				return fmt.Errorf("say what to answer: an option number, yes, no, always, or --text")
			}
			if req.Dialog == "" {
				if s.WaitingFor == nil || s.WaitingFor.DialogID == "" {
					return fmt.Errorf("session %s shows no dialog to answer (status %s)", s.Name, s.Status)
				}
				req.Dialog = s.WaitingFor.DialogID
			}
			res, err := c.Answer(cmd.Context(), s.ID, req)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "answered %s\n", safe(res.Answered))
			return nil
		},
	}
	cmd.Flags().StringVar(&text, "text", "", "the text of the dialog's text option")
	cmd.Flags().StringVar(&dialog, "dialog", "", "the dialog's id (waiting_for.dialog_id); default: the dialog shown now")
	return cmd
}

func newRestartCmd(e *env) *cobra.Command {
	var resume bool
	cmd := &cobra.Command{
		Use:   "restart ID",
		Short: "Start Claude again in an exited session (--resume: in its last conversation)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, s, err := e.session(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			_, err = c.Restart(cmd.Context(), s.ID, api.RestartRequest{Resume: resume})
			return err
		},
	}
	cmd.Flags().BoolVar(&resume, "resume", false, "resume the session's last conversation instead of a new one")
	return cmd
}
