package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/version"
)

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print corral's version (and the daemon's, if one runs)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(e.stdout, "corral %s\n", version.String())
			c, err := e.client()
			if err != nil {
				return nil
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Second)
			defer cancel()
			if v, err := c.Version(ctx); err == nil && v.Version != version.String() {
				fmt.Fprintf(e.stdout, "daemon %s (pid %d) — restart it to run this version\n", safe(v.Version), v.PID)
			}
			return nil
		},
	}
}
