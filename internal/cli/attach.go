package cli

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/attach"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/tmux"
)

func newAttachCmd(e *env) *cobra.Command {
	var keyName string
	cmd := &cobra.Command{
		Use:   "attach ID",
		Short: "Attach this terminal to a session; Ctrl-\\ detaches and leaves it running",
		Long: `Attach this terminal to a session's tmux pane. What you type goes to the
session and you see its screen, as a browser viewer does.

The detach key (Ctrl-\ by default; --detach-key to change it) leaves the
session running. corral's tmux has no prefix key, because Claude Code uses
Ctrl-B itself.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if e.hubURL != "" || e.getenv("CORRAL_HUB") != "" {
				return fmt.Errorf("attach works on the machine that runs the session; use the web UI for remote sessions")
			}
			key, err := attach.ParseKey(keyName)
			if err != nil {
				return err
			}
			_, s, err := e.session(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			dir, err := e.dir()
			if err != nil {
				return err
			}
			srv := tmux.New(datadir.Socket(dir, datadir.TmuxSocket), "")
			argv := srv.AttachCommand(s.ID)
			bin, err := exec.LookPath(argv[0])
			if err != nil {
				return fmt.Errorf("tmux not found: %w", err)
			}
			argv[0] = bin
			if key != 0 {
				fmt.Fprintf(e.stderr, "corral: attached to %s; %s detaches\n", safe(s.Name), attach.KeyName(key))
			}
			return attach.Run(cmd.Context(), attach.Options{
				Argv: argv, Env: srv.Env(), In: os.Stdin, Out: os.Stdout,
				Key: key, Detach: srv.DetachClient,
			})
		},
	}
	cmd.Flags().StringVar(&keyName, "detach-key", attach.KeyName(attach.DefaultKey), "key that detaches: ctrl-X, ^X, or none")
	return cmd
}
