package cli

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/tmux"
)

func newAttachCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "attach ID",
		Short: "Attach this terminal to a session (detach with the tmux key C-b d is off: close the terminal or use `tmux detach`)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if e.hubURL != "" || e.getenv("CORRAL_HUB") != "" {
				return fmt.Errorf("attach works on the machine that runs the session; use the web UI for remote sessions")
			}
			c, err := e.client()
			if err != nil {
				return err
			}
			s, err := resolve(cmd.Context(), c, args[0])
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
			env := os.Environ()
			filtered := env[:0]
			for _, kv := range env {
				if len(kv) >= 5 && kv[:5] == "TMUX=" {
					continue // attaching from inside tmux is fine with our own socket
				}
				filtered = append(filtered, kv)
			}
			return syscall.Exec(bin, argv, filtered)
		},
	}
}
