package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/corral-dev/corral/internal/api"
)

// WorktreeDir is where corral puts a repository's worktrees, inside its
// main working tree: the folder Claude Code's own `claude --worktree` uses,
// so Claude knows them for worktrees, and inside the repository, so inside
// whatever roots hold it. corral adds it to the repository's
// .git/info/exclude (as Claude Code does), so the main tree's status
// does not list them and `git add -A` does not take them in.
const WorktreeDir = ".claude/worktrees"

// maxBranch bounds a branch name.
const maxBranch = 200

// WorktreePath is where the worktree of a branch goes: "/" in the name
// becomes "+" (feat/x → .claude/worktrees/feat+x), as Claude Code does.
func WorktreePath(main, branch string) string {
	return filepath.Join(main, filepath.FromSlash(WorktreeDir), strings.ReplaceAll(branch, "/", "+"))
}

// CheckBranch refuses a name that cannot be a new branch: what `git
// check-ref-format --branch` refuses ("../x", "a..b", "x.lock", "@{-1}"
// and the like), and before asking it, anything git would read as an
// option or that is not printable.
func (g *Git) CheckBranch(ctx context.Context, dir, name string) error {
	bad := func(why string) error {
		return api.Errorf(api.CodeBadRequest, "branch name %q: %s", name, why)
	}
	switch {
	case name == "":
		return bad("empty")
	case len(name) > maxBranch:
		return bad("longer than 200 bytes")
	case strings.HasPrefix(name, "-"):
		return bad("starts with -")
	case strings.Contains(name, "@{"):
		return bad("names another checkout (@{...})")
	}
	for _, r := range name {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return bad("has a space or a control character")
		}
	}
	res, err := g.run(ctx, dir, limits{}, "check-ref-format", "--branch", name)
	if err != nil {
		return bad("git check-ref-format refuses it (no \"..\", no leading \"/\" or \".\", no \"~^:?*[\\\", no \".lock\" ending)")
	}
	if strings.TrimSpace(string(res.out)) != name {
		return bad("git reads it as another name")
	}
	return nil
}

// AddWorktree makes a new worktree of r's repository on a new branch,
// starting at base (a branch, tag or commit; "" for HEAD), in
// WorktreePath. It returns what the session remembers.
func (g *Git) AddWorktree(ctx context.Context, r Repo, branch, base string) (api.SessionWorktree, error) {
	main := r.Main()
	if err := g.CheckBranch(ctx, main, branch); err != nil {
		return api.SessionWorktree{}, err
	}
	// An existing branch is someone's work: never reset it.
	if _, err := g.run(ctx, main, limits{}, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		return api.SessionWorktree{}, api.Errorf(api.CodeConflict, "branch %s exists already; name a new one", branch)
	}
	commit, err := g.resolveBase(ctx, main, base)
	if err != nil {
		return api.SessionWorktree{}, err
	}
	path := WorktreePath(main, branch)
	if exists(path) {
		return api.SessionWorktree{}, api.Errorf(api.CodeConflict, "%s exists already", path)
	}
	if err := g.exclude(ctx, r, main); err != nil {
		return api.SessionWorktree{}, err
	}
	if _, err := g.run(ctx, main, limits{timeout: worktreeTimeout}, "worktree", "add", "-b", branch, "--", path, commit); err != nil {
		return api.SessionWorktree{}, err
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	return api.SessionWorktree{Repo: main, Path: path, Branch: branch, Base: commit}, nil
}

// resolveBase finds the commit a new branch starts from.
func (g *Git) resolveBase(ctx context.Context, dir, base string) (string, error) {
	rev := "HEAD"
	if base != "" {
		if strings.HasPrefix(base, "-") || len(base) > 256 || strings.ContainsAny(base, "\x00\n") {
			return "", api.Errorf(api.CodeBadRequest, "base %q: not a branch, tag or commit", base)
		}
		rev = base
	}
	res, err := g.run(ctx, dir, limits{}, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		if base == "" {
			return "", api.Errorf(api.CodeConflict, "the repository has no commit yet to start a worktree from")
		}
		return "", api.Errorf(api.CodeBadRequest, "base %q: no such branch, tag or commit", base)
	}
	return strings.TrimSpace(string(res.out)), nil
}

// exclude makes sure the repository ignores its worktrees' folder,
// appending it to .git/info/exclude (shared by every worktree) if nothing
// ignores it yet.
func (g *Git) exclude(ctx context.Context, r Repo, main string) error {
	probe := WorktreeDir + "/x"
	res, err := g.run(ctx, main, limits{ok: []int{1}, patterns: true}, "check-ignore", "-q", "--no-index", "--", probe)
	if err != nil {
		return err
	}
	if res.exit == 0 {
		return nil
	}
	info := filepath.Join(r.CommonDir, "info")
	if err := os.MkdirAll(info, 0o755); err != nil {
		return api.Errorf(api.CodeConflict, "cannot exclude %s from the repository: %v", WorktreeDir, err)
	}
	f, err := os.OpenFile(filepath.Join(info, "exclude"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return api.Errorf(api.CodeConflict, "cannot exclude %s from the repository: %v", WorktreeDir, err)
	}
	_, werr := f.WriteString("\n# corral: the worktrees of its sessions (and Claude Code's)\n/" + WorktreeDir + "/\n")
	if err := errors.Join(werr, f.Close()); err != nil {
		return api.Errorf(api.CodeConflict, "cannot exclude %s from the repository: %v", WorktreeDir, err)
	}
	return nil
}

// Dirty lists what would be lost by removing the worktree at dir: its
// changed and untracked paths (ignored files go with it, as with `git
// worktree remove`). A folder that is gone has nothing to lose.
func (g *Git) Dirty(ctx context.Context, dir string) ([]string, error) {
	if !exists(dir) {
		return nil, nil
	}
	r, err := g.Open(ctx, dir, nil)
	if err != nil {
		return nil, err
	}
	st, err := g.Status(ctx, r, false)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range st.Files {
		out = append(out, f.Path)
	}
	if st.Truncated || st.FilesTruncated {
		out = append(out, "…")
	}
	return out, nil
}

// RemoveWorktree removes a worktree corral made (`git worktree remove`),
// with force even with changes in it. Its branch stays. A folder already
// gone is pruned from the repository's list.
func (g *Git) RemoveWorktree(ctx context.Context, w api.SessionWorktree, force bool) error {
	if !exists(w.Path) {
		_, err := g.run(ctx, w.Repo, limits{}, "worktree", "prune")
		return err
	}
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force")
	}
	_, err := g.run(ctx, w.Repo, limits{timeout: worktreeTimeout}, append(args, "--", w.Path)...)
	return err
}

// DeleteBranch deletes a branch corral made and nothing used (its session
// never started).
func (g *Git) DeleteBranch(ctx context.Context, repo, branch string) error {
	_, err := g.run(ctx, repo, limits{}, "branch", "-D", branch)
	return err
}
