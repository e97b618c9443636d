package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/api"
)

func newDownloadCmd(e *env) *cobra.Command {
	var overwrite, asJSON bool
	var maxMiB int64
	cmd := &cobra.Command{
		Use:   "download ID URL [PATH]",
		Short: "Fetch a file (https:// presigned URL or s3://bucket/key) into a session's directory",
		Long: `Fetch a file into a session's directory, on the machine that runs the
session. URL is an http(s) URL (a presigned object-storage link) or
s3://bucket/key, fetched with the machine's credentials ($CORRAL_S3_ENDPOINT,
$AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY, $AWS_REGION in the daemon's
environment). PATH is relative to the session's directory (default: the
URL's file name) and may not leave it. An existing file is kept unless
--overwrite.`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, s, err := e.session(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			req := api.DownloadRequest{URL: args[1], Overwrite: overwrite, MaxBytes: maxMiB << 20}
			if len(args) == 3 {
				req.Path = args[2]
			}
			res, err := c.Download(cmd.Context(), s.ID, req)
			if errors.Is(err, api.ErrConflict) {
				return fmt.Errorf("%w (pass --overwrite to replace it)", err)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return newJSON(e.stdout).Encode(res)
			}
			fmt.Fprintf(e.stdout, "%s (%d bytes, sha256 %s)\n", safe(res.Path), res.Size, safe(res.SHA256))
			return nil
		},
	}
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "replace an existing file")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().Int64Var(&maxMiB, "max-mib", 0, "refuse files larger than this many MiB (default 100)")
	return cmd
}
