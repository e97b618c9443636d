package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/version"
)

// versionOutput is `corral version --json`: this binary's build, and the
// daemon's version when one answers.
type versionOutput struct {
	version.Info
	Daemon *api.VersionInfo `json:"daemon,omitempty"`
}

func newVersionCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version [--json]",
		Short: "Print corral's version, commit and build date (and the daemon's version, if one runs)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := versionOutput{Info: version.Get()}
			if c, err := e.client(); err == nil {
				ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Second)
				if v, err := c.Version(ctx); err == nil {
					out.Daemon = &v
				}
				cancel()
			}
			if asJSON {
				return json.NewEncoder(e.stdout).Encode(out)
			}
			fmt.Fprintf(e.stdout, "corral %s\n", describeBuild(out.Info))
			if d := out.Daemon; d != nil && d.Version != out.Version {
				fmt.Fprintf(e.stdout, "daemon %s (pid %d) — restart it to run this version\n", safe(d.Version), d.PID)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// describeBuild is one line: "v1.2.3 (commit 0123abcd4567, 2026-12-01T10:00:00Z, go1.26 linux/amd64)".
func describeBuild(in version.Info) string {
	s := in.Version + " ("
	if c := in.Short(); c != "" {
		s += "commit " + c + ", "
	}
	if in.Date != "" {
		s += in.Date + ", "
	}
	return s + in.Go + " " + in.OS + "/" + in.Arch + ")"
}
