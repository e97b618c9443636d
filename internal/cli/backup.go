package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/store"
)

// backupResult is `corral backup --json` and `corral restore --json`.
type backupResult struct {
	File     string `json:"file"`
	Database string `json:"database"`
	Schema   int    `json:"schema"`
	Sessions int    `json:"sessions"`
	Size     int64  `json:"size"`
	// Aside is where restore put the database it replaced.
	Aside string `json:"aside,omitempty"`
}

func newBackupCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "backup FILE",
		Short: "Copy the database to FILE, consistently, while corral runs (FILE may be a directory)",
		Long: `Write a consistent copy of the data directory's database to FILE, while the
daemon runs. The copy is checked before it replaces FILE, and has mode 0600:
it holds token hashes and push keys. Given a directory, the file in it is
named corral-YYYYMMDD-HHMMSS.db.

Bring it back with 'corral restore FILE'.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := e.dir()
			if err != nil {
				return err
			}
			db := filepath.Join(dir, datadir.Database)
			if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("no database in %s: nothing to back up", dir)
			}
			dst := args[0]
			if fi, err := os.Stat(dst); err == nil && fi.IsDir() {
				dst = filepath.Join(dst, "corral-"+time.Now().Format("20060102-150405")+".db")
			}
			info, err := store.Backup(cmd.Context(), db, dst)
			if err != nil {
				return err
			}
			res := backupResult{File: dst, Database: db, Schema: info.Schema, Sessions: info.Sessions, Size: info.Size}
			if asJSON {
				return json.NewEncoder(e.stdout).Encode(res)
			}
			fmt.Fprintf(e.stdout, "backed up %s to %s (schema %d, %d sessions, %d KiB)\n", db, dst, info.Schema, info.Sessions, (info.Size+1023)/1024)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newRestoreCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "restore FILE",
		Short: "Replace the database with a backup (corral must not be running); the old one is kept aside",
		Long: `Replace the data directory's database with FILE, a backup made by
'corral backup'. It refuses while a daemon serves the data directory, and
refuses a file that is not a sound corral database of a schema this build
knows (an older one is migrated when corral starts). The database it
replaces is renamed to corral.db.before-restore-TIME, beside it.

Sessions still running in tmux are matched again with the restored list
when corral starts.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := e.dir()
			if err != nil {
				return err
			}
			if err := datadir.Ensure(dir); err != nil {
				return err
			}
			// Holding the daemon's lock keeps one from starting mid-restore.
			lock, err := datadir.Acquire(dir, datadir.Owner{PID: os.Getpid(), StartedAt: time.Now()})
			var le *datadir.ErrLocked
			if errors.As(err, &le) {
				return fmt.Errorf("%v: stop it first (Ctrl-C where it runs, 'systemctl --user stop corral-serve' or 'corral-agent' for a service, or kill %d), then restore", le, le.Owner.PID)
			} else if err != nil {
				return err
			}
			defer lock.Release()
			db := filepath.Join(dir, datadir.Database)
			aside, info, err := store.Restore(cmd.Context(), args[0], db)
			if err != nil {
				return err
			}
			res := backupResult{File: args[0], Database: db, Schema: info.Schema, Sessions: info.Sessions, Size: info.Size, Aside: aside}
			if asJSON {
				return json.NewEncoder(e.stdout).Encode(res)
			}
			fmt.Fprintf(e.stdout, "restored %s into %s (schema %d, %d sessions)\n", args[0], db, info.Schema, info.Sessions)
			if aside != "" {
				fmt.Fprintf(e.stdout, "the database it replaced is at %s\n", aside)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
