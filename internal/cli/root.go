// Package cli is corral's command line: one file per command, flags in
// per-command structs, data on stdout and diagnostics on stderr.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/client"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/termsafe"
)

// env is what every command shares: where to find the daemon and where to
// write. No package-level state: tests build their own.
type env struct {
	dataDir string
	hubURL  string
	token   string
	hubDB   string // corral hub --db
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	getenv  func(string) string
}

// exitError carries a process exit code through cobra.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Main runs the CLI and returns the process exit code.
func Main(args []string) int {
	// Claude runs hooks on every event and waits for them: skip cobra and
	// go straight to delivery.
	if len(args) > 0 && (args[0] == "hook" || args[0] == "statusline") {
		return runHookFast(args, os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	}
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	root := newRoot(e)
	root.SetArgs(args)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	printError(e.stderr, err)
	return 1
}

// printError prints a command's error. Its text may quote what a daemon, a
// hub or a device said: it is made safe like any other output.
func printError(w io.Writer, err error) {
	fmt.Fprintln(w, "corral:", termsafe.Text(err.Error()))
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "corral",
		Short: "Run many Claude Code sessions and see at a glance what each is doing",
		Long: `corral runs Claude Code sessions in tmux, on one machine or many, and shows
what each is doing: idle, busy, waiting for you, or done with something to review.

Start the daemon with 'corral serve', then create and drive sessions with the
other commands or from the browser.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	pf := root.PersistentFlags()
	pf.StringVar(&e.dataDir, "data-dir", "", "data directory (default $CORRAL_HOME, else $XDG_DATA_HOME/corral, else ~/.local/share/corral)")
	pf.StringVar(&e.hubURL, "hub", "", "talk to a corral hub at this URL instead of the local daemon ($CORRAL_HUB)")
	pf.StringVar(&e.token, "token", "", "access token for --hub ($CORRAL_TOKEN)")

	root.AddCommand(
		newServeCmd(e),
		newAgentCmd(e),
		newHubCmd(e),
		newNewCmd(e),
		newLsCmd(e),
		newSendCmd(e),
		newKeysCmd(e),
		newAnswerCmd(e),
		newRestartCmd(e),
		newCaptureCmd(e),
		newTimelineCmd(e),
		newGitCmd(e),
		newViewedCmd(e),
		newAttachCmd(e),
		newKillCmd(e),
		newRenameCmd(e),
		newRunCmd(e),
		newDownloadCmd(e),
		newWatchCmd(e),
		newResumableCmd(e),
		newDirsCmd(e),
		newDevicesCmd(e),
		newNotificationsCmd(e),
		newWebhookCmd(e),
		newDoctorCmd(e),
		newVersionCmd(e),
		newBackupCmd(e),
		newRestoreCmd(e),
		newServiceCmd(e),
		newPasswdCmd(e),
		newLoginLinkCmd(e),
		newTokenCmd(e),
		newSessionsCmd(e),
		newHooksCmd(e),
		newHookCmd(e, "hook", "Deliver a Claude Code hook payload (stdin) to corral; Claude runs this"),
		newHookCmd(e, "statusline", "Deliver Claude Code's status line input (stdin) to corral and print the user's own status line"),
	)
	return root
}

// dir resolves the data directory.
func (e *env) dir() (string, error) {
	return datadir.Resolve(e.dataDir, e.getenv)
}

// client returns the API client: the hub's when --hub is given, else the
// local daemon's unix socket.
func (e *env) client() (*client.Client, error) {
	hub := e.hubURL
	if hub == "" {
		hub = e.getenv("CORRAL_HUB")
	}
	if hub != "" {
		tok := e.token
		if tok == "" {
			tok = e.getenv("CORRAL_TOKEN")
		}
		if tok == "" {
			return nil, errors.New("--hub needs --token (or $CORRAL_TOKEN)")
		}
		c := client.HTTP(hub, tok)
		if err := c.Err(); err != nil {
			return nil, err
		}
		return c, nil
	}
	dir, err := e.dir()
	if err != nil {
		return nil, err
	}
	return client.Unix(datadir.Socket(dir, datadir.APISocket)), nil
}

// session is the client and the session that ref names: what every command
// about one session starts with.
func (e *env) session(ctx context.Context, ref string) (*client.Client, api.Session, error) {
	c, err := e.client()
	if err != nil {
		return nil, api.Session{}, err
	}
	s, err := resolve(ctx, c, ref)
	return c, s, err
}

// resolve finds a session by exact id, exact name, or unique id prefix, so
// people can type what they see.
func resolve(ctx context.Context, c *client.Client, ref string) (api.Session, error) {
	if ref == "" {
		return api.Session{}, errors.New("no session given")
	}
	list, err := c.Sessions(ctx)
	if err != nil {
		return api.Session{}, err
	}
	for _, s := range list {
		if s.ID == ref {
			return s, nil
		}
	}
	var byName, byPrefix []api.Session
	for _, s := range list {
		if s.Name == ref {
			byName = append(byName, s)
		}
		if strings.HasPrefix(s.ID, ref) {
			byPrefix = append(byPrefix, s)
		}
	}
	switch {
	case len(byName) == 1:
		return byName[0], nil
	case len(byName) > 1:
		return api.Session{}, fmt.Errorf("%d sessions are named %q; use the id", len(byName), ref)
	case len(byPrefix) == 1:
		return byPrefix[0], nil
	case len(byPrefix) > 1:
		return api.Session{}, fmt.Errorf("%q matches %d session ids; type more of it", ref, len(byPrefix))
	}
	return api.Session{}, api.Errorf(api.CodeNotFound, "no session %q (see `corral ls`)", ref)
}
