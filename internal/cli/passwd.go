package cli

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/corral-dev/corral/internal/hub"
)

func newPasswdCmd(e *env) *cobra.Command {
	var stdin, clear bool
	cmd := &cobra.Command{
		Use:   "passwd",
		Short: "Set the web dashboard's password (logs every browser out)",
		Long: `Set a password for the web dashboard, so it can be opened without a login
link. Setting or clearing it logs every browser out. The daemon need not be
stopped.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var pw string
			if !clear {
				var err error
				pw, err = readPassword(e, stdin)
				if err != nil {
					return err
				}
			}
			if err := withLocalAccounts(cmd.Context(), e, func(acc *hub.Accounts) error {
				return acc.SetPassword(cmd.Context(), acc.User(), pw)
			}); err != nil {
				return err
			}
			if clear {
				fmt.Fprintln(e.stdout, "password cleared; log in with a login link (`corral login-link`)")
			} else {
				fmt.Fprintln(e.stdout, "password set")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&stdin, "stdin", false, "read the password from the first line of stdin")
	cmd.Flags().BoolVar(&clear, "clear", false, "remove the password")
	return cmd
}

func readPassword(e *env, fromStdin bool) (string, error) {
	if fromStdin {
		line, err := bufio.NewReader(e.stdin).ReadString('\n')
		if err != nil && line == "" {
			return "", errors.New("no password on stdin")
		}
		return strings.TrimRight(line, "\r\n"), nil
	}
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
		return "", errors.New("not a terminal: pass --stdin to read the password from stdin")
	}
	fmt.Fprint(e.stderr, "New password: ")
	a, err := term.ReadPassword(fd)
	fmt.Fprintln(e.stderr)
	if err != nil {
		return "", err
	}
	fmt.Fprint(e.stderr, "Again: ")
	b, err := term.ReadPassword(fd)
	fmt.Fprintln(e.stderr)
	if err != nil {
		return "", err
	}
	if string(a) != string(b) {
		return "", errors.New("the passwords differ")
	}
	return string(a), nil
}
