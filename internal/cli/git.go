package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/termsafe"
)

func newGitCmd(e *env) *cobra.Command {
	var diff, staged, asJSON bool
	cmd := &cobra.Command{
		Use:   "git ID [--diff [FILE]] [--staged] [--json]",
		Short: "Show the git status of a session's folder, or its diff",
		Long: `Show the git status of a session's folder: its branch, and every changed file
with its status letters (staged, then unstaged, as git status --short) and
line counts. With --diff, print the unstaged diff (untracked files shown as
new ones), or with --staged the staged one; FILE limits it to one file,
named as the status names it (relative to the repository's root).

git runs on the session's machine (through a hub too). docs/git.md.`,
		Example: `  corral git work
  corral git work --diff
  corral git work --diff --staged "src/main file.go"
  corral git work --json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 && !diff {
				return fmt.Errorf("a FILE goes with --diff")
			}
			if staged && !diff {
				return fmt.Errorf("--staged goes with --diff")
			}
			c, s, err := e.session(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if diff {
				req := api.GitDiffRequest{SessionRef: api.SessionRef{ID: s.ID}, Staged: staged}
				if len(args) == 2 {
					req.Path = args[1]
				}
				d, err := c.GitDiff(cmd.Context(), req)
				if err != nil {
					return err
				}
				if asJSON {
					return newJSON(e.stdout).Encode(d)
				}
				return printDiff(e.stdout, d)
			}
			st, err := c.GitStatus(cmd.Context(), s.ID)
			if err != nil {
				return err
			}
			if asJSON {
				return newJSON(e.stdout).Encode(st)
			}
			return printGitStatus(e.stdout, st)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&diff, "diff", false, "print the diff (of FILE, if given) instead of the status")
	fl.BoolVar(&staged, "staged", false, "with --diff: the staged changes (HEAD to index)")
	fl.BoolVar(&asJSON, "json", false, "print JSON (docs/api.md: git_status, git_diff)")
	return cmd
}

// printGitStatus writes a status as `git status --short --branch` does,
// with each file's line counts. Every name came from some machine's disk:
// it is escaped.
func printGitStatus(w io.Writer, st api.GitStatus) error {
	var b strings.Builder
	b.WriteString("## ")
	switch {
	case st.Detached:
		b.WriteString("HEAD (detached at " + safe(short(st.Head)) + ")")
	case st.Head == "":
		b.WriteString("No commits yet on " + safe(st.Branch))
	default:
		b.WriteString(safe(st.Branch))
	}
	if st.Upstream != "" {
		b.WriteString("..." + safe(st.Upstream))
		var ab []string
		if st.Ahead > 0 {
			ab = append(ab, fmt.Sprintf("ahead %d", st.Ahead))
		}
		if st.Behind > 0 {
			ab = append(ab, fmt.Sprintf("behind %d", st.Behind))
		}
		if len(ab) > 0 {
			b.WriteString(" [" + strings.Join(ab, ", ") + "]")
		}
	}
	if st.Worktree {
		b.WriteString(" (worktree)")
	}
	b.WriteString("  " + safe(st.Root) + "\n")
	for _, f := range st.Files {
		x, y := letter(f.Index), letter(f.Worktree)
		name := safe(f.Path)
		if f.OldPath != "" {
			name = safe(f.OldPath) + " -> " + name
		}
		fmt.Fprintf(&b, "%s%s %s%s\n", x, y, name, lineCounts(f))
	}
	if st.FilesTruncated || st.Truncated {
		fmt.Fprintf(&b, "(%d changed paths; not all are listed)\n", st.Changed)
	}
	if st.Error != "" {
		b.WriteString("error: " + safe(st.Error) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func letter(s string) string {
	if s == "." || s == "" {
		return " "
	}
	return safe(s)
}

func short(h string) string { return h[:min(len(h), 12)] }

// lineCounts is "  +3 -1" (staged and unstaged added up), "  binary", or
// nothing.
func lineCounts(f api.GitFile) string {
	var add, del int
	bin, counted := false, false
	for _, l := range []*api.GitLines{f.Staged, f.Unstaged} {
		if l == nil {
			continue
		}
		counted = true
		add, del, bin = add+l.Added, del+l.Removed, bin || l.Binary
	}
	switch {
	case !counted:
		return ""
	case bin && add == 0 && del == 0:
		return "  binary"
	}
	return fmt.Sprintf("  +%d -%d", add, del)
}

// printDiff writes the patches one after another, as git diff does. The
// text is a file's content from some machine: escaped, newlines and tabs
// kept.
func printDiff(w io.Writer, d api.GitDiff) error {
	var b strings.Builder
	for _, f := range d.Files {
		switch {
		case f.Patch != "":
			b.WriteString(f.Patch)
		case f.Binary:
			fmt.Fprintf(&b, "Binary file %s changed\n", f.Path)
		}
		if f.Truncated {
			fmt.Fprintf(&b, "(the diff of %s is cut: %d lines added, %d removed in all)\n", f.Path, f.Added, f.Removed)
		}
	}
	if len(d.Files) == 0 {
		if d.Staged {
			b.WriteString("(nothing staged)\n")
		} else {
			b.WriteString("(no unstaged changes)\n")
		}
	}
	_, err := io.WriteString(w, termsafe.Text(b.String()))
	return err
}
