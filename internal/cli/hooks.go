package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/claude/hooks"
	"github.com/corral-dev/corral/internal/shellquote"
)

func newHooksCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Install corral's hooks for claude started outside corral",
		Long: `Sessions that corral starts get its hooks through a settings file of their
own; nothing is changed in ~/.claude. To also see the state of claude started
in any terminal, install the hooks into ~/.claude/settings.json: corral merges
its entries next to yours (your hooks and settings stay), writes a backup
first, and keeps showing your own status line. When $CLAUDE_CONFIG_DIR is
set, Claude reads its settings from there instead, and so does this command.`,
	}
	var global bool
	install := &cobra.Command{
		Use:   "install --global",
		Short: "Add corral's hooks and status line to ~/.claude/settings.json",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !global {
				return errors.New("say --global: this edits ~/.claude/settings.json (sessions corral starts need nothing)")
			}
			claudeDir, hookCmd, statusCmd, err := e.hookCommands()
			if err != nil {
				return err
			}
			res, err := hooks.InstallGlobal(claudeDir, hookCmd, statusCmd)
			if err != nil {
				return err
			}
			if !res.Changed {
				fmt.Fprintf(e.stdout, "corral's hooks are already in %s\n", safe(res.Path))
				return nil
			}
			fmt.Fprintf(e.stdout, "installed %d hooks and the status line in %s\n", res.HooksAdded, safe(res.Path))
			if res.Backup != "" {
				fmt.Fprintf(e.stdout, "backup of the previous file: %s\n", safe(res.Backup))
			}
			return nil
		},
	}
	install.Flags().BoolVar(&global, "global", false, "edit ~/.claude/settings.json")
	uninstall := &cobra.Command{
		Use:   "uninstall --global",
		Short: "Remove corral's hooks from ~/.claude/settings.json and restore your status line",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !global {
				return errors.New("say --global: this edits ~/.claude/settings.json")
			}
			claudeDir, _, _, err := e.hookCommands()
			if err != nil {
				return err
			}
			res, err := hooks.UninstallGlobal(claudeDir)
			if err != nil {
				return err
			}
			if !res.Changed {
				fmt.Fprintf(e.stdout, "no corral hooks in %s\n", safe(res.Path))
				return nil
			}
			fmt.Fprintf(e.stdout, "removed %d hooks from %s\n", res.HooksRemoved, safe(res.Path))
			if res.Backup != "" {
				fmt.Fprintf(e.stdout, "backup of the previous file: %s\n", safe(res.Backup))
			}
			return nil
		},
	}
	uninstall.Flags().BoolVar(&global, "global", false, "edit ~/.claude/settings.json")
	cmd.AddCommand(install, uninstall)
	return cmd
}

// hookCommands returns Claude's configuration directory (~/.claude, or
// $CLAUDE_CONFIG_DIR as Claude picks it) and the hook and status line
// command lines this binary and data directory should register: the same
// strings the daemon writes into its own settings file, so Claude sees
// one hook, not two, in a session corral started.
func (e *env) hookCommands() (claudeDir string, hookCmd hooks.Exec, statusCmd string, err error) {
	home := e.getenv("HOME")
	if home == "" && e.getenv("CLAUDE_CONFIG_DIR") == "" {
		if home, err = os.UserHomeDir(); err != nil {
			return
		}
	}
	claudeDir = claude.ConfigDir(e.getenv, home)
	dir, err := e.dir()
	if err != nil {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	if r, rerr := filepath.EvalSymlinks(exe); rerr == nil {
		exe = r
	}
	hookCmd = agent.HookExec(exe, dir)
	statusCmd = shellquote.Join(exe, "statusline", "--data-dir", dir)
	return
}
