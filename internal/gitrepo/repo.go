package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/corral-dev/corral/internal/api"
)

// Repo is one working tree of a repository.
type Repo struct {
	// Top is the working tree's top folder (symlinks resolved, as git
	// reports it).
	Top string
	// GitDir is the working tree's git directory; CommonDir the
	// repository's, which a linked worktree shares with the main one.
	GitDir, CommonDir string
}

// Linked reports whether this is a linked worktree (`git worktree add`),
// not the repository's main working tree.
func (r Repo) Linked() bool { return filepath.Clean(r.GitDir) != filepath.Clean(r.CommonDir) }

// Main is the repository's main working tree: the folder of its .git, or,
// for a bare repository's worktree, this one.
func (r Repo) Main() string {
	if filepath.Base(r.CommonDir) == ".git" {
		return filepath.Dir(r.CommonDir)
	}
	return r.Top
}

// Open finds the working tree that dir is in. The folder must lie inside
// one of roots (symlinks resolved), and so must the working tree's top: a
// folder inside the roots that is part of a repository above them (a home
// directory kept in git) is refused, since its status would name files
// outside. A nil roots checks nothing (tests; the agent always has roots).
// Not in a working tree (no repository, a bare one, inside .git) is
// not_a_repository.
func (g *Git) Open(ctx context.Context, dir string, roots []string) (Repo, error) {
	if !filepath.IsAbs(dir) || strings.ContainsRune(dir, 0) {
		return Repo{}, api.Errorf(api.CodeBadRequest, "folder must be an absolute path: %q", dir)
	}
	if roots != nil && !Within(dir, roots) {
		return Repo{}, outside(dir, roots)
	}
	res, err := g.run(ctx, dir, limits{}, "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir", "--git-common-dir")
	if err != nil {
		if e, ok := err.(*api.Error); ok && e.Code == api.CodeConflict && strings.Contains(e.Message, "must be run in a work tree") {
			return Repo{}, &api.Error{Code: api.CodeNotARepository, Message: "not in a git working tree (a bare repository, or inside .git)"}
		}
		return Repo{}, err
	}
	lines := strings.Split(strings.TrimSuffix(string(res.out), "\n"), "\n")
	if len(lines) != 3 {
		// A path with a newline in it, or a git that answers otherwise.
		return Repo{}, api.Errorf(api.CodeConflict, "git rev-parse: cannot read its answer %q", res.out)
	}
	r := Repo{Top: lines[0], GitDir: lines[1], CommonDir: lines[2]}
	for _, p := range []string{r.Top, r.GitDir, r.CommonDir} {
		if !filepath.IsAbs(p) {
			return Repo{}, api.Errorf(api.CodeConflict, "git rev-parse: %q is not an absolute path (git 2.31 or later is needed)", p)
		}
	}
	if roots != nil && !Within(r.Top, roots) {
		return Repo{}, outside(r.Top, roots)
	}
	return r, nil
}

func outside(path string, roots []string) error {
	return api.Errorf(api.CodeForbidden, "the repository at %s is outside the folders this machine serves (%s); its owner can add one with --root",
		path, strings.Join(roots, ", "))
}

// Within reports whether path lies inside one of roots, both with their
// symlinks resolved. A path that does not exist is not within.
func Within(path string, roots []string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	for _, r := range roots {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			continue
		}
		if real == rr || rr == "/" || strings.HasPrefix(real, rr+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// exists reports whether path exists (without following a final symlink).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
