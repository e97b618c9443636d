package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/termsafe"
)

func newRunCmd(e *env) *cobra.Command {
	var timeout time.Duration
	var raw bool
	cmd := &cobra.Command{
		Use:   "run ID -- CMD [ARGS...]",
		Short: "Run a command beside a session (its directory and environment), print its output, exit with its code",
		Long: `Run a command beside a session: in the directory the session's pane is in,
with the session's environment, without typing into Claude. The command is run
directly (no shell); use 'sh -c "..."' for shell syntax. Output is stdout and
stderr together; corral exits with the command's exit code. Terminal escapes
in the output are shown escaped (\x1b...), like every string corral prints;
--raw prints them as they are.`,
		Example: `  corral run app -- git status --short
  corral run app -- sh -c 'make test 2>&1 | tail -20'`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			// With flags not interspersed, a "--" after the id arrives as an
			// argument.
			if len(args) > 2 && args[1] == "--" {
				args = append(args[:1], args[2:]...)
			}
			c, s, err := e.session(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			res, err := c.Run(cmd.Context(), s.ID, api.RunRequest{Argv: args[1:], TimeoutMS: int(timeout.Milliseconds())})
			if err != nil {
				return err
			}
			out := res.Output
			if !raw {
				out = termsafe.Text(out)
			}
			fmt.Fprint(e.stdout, out)
			if out != "" && !strings.HasSuffix(out, "\n") {
				fmt.Fprintln(e.stdout)
			}
			if res.Truncated {
				fmt.Fprintln(e.stderr, "corral: output was cut at the size limit")
			}
			if res.ExitCode != 0 {
				return exitError{code: res.ExitCode}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "kill the command after this long")
	cmd.Flags().BoolVar(&raw, "raw", false, "print the output as it is, terminal escapes included (default: escaped, as every output)")
	// Everything after the session id is the command, flags included.
	cmd.Flags().SetInterspersed(false)
	return cmd
}
