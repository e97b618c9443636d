package agentlink

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude"
)

// Policy is what a machine's owner lets its hub do (docs/security.md). The
// agent checks every request of the hub against it before the agent sees
// the request, so a compromised hub gets no further than the policy. What
// is always allowed is what a person does in the dashboard: list, start
// (inside the roots), restart and end sessions, watch and type into their
// terminals, answer their dialogs, capture, rename. (A restart starts
// claude again with the arguments the session was made with, which this
// policy checked when the hub made it, or the machine's owner chose.)
//
// The zero Policy is `corral agent`'s default: sessions anywhere in
// Roots (or nowhere, when Roots is empty; see Unrestricted), no commands,
// no extra Claude arguments.
type Policy struct {
	// Roots are the directories the hub may use: start sessions in, list,
	// list resumable conversations of, download into. Symlinks are
	// resolved before the check.
	Roots []string
	// Unrestricted lifts the roots (corral serve, where the hub is this
	// very process).
	Unrestricted bool
	// Home is what "~" means in a session's directory.
	Home string
	// AllowRun lets the hub run commands beside a session (`corral run`).
	AllowRun bool
	// AllowClaudeArgs lets the hub pass extra arguments to claude that
	// claude.DangerousArgs does not flag.
	AllowClaudeArgs bool
	// AllowDangerousArgs lets the hub pass any arguments to claude,
	// --dangerously-skip-permissions included; it implies AllowClaudeArgs.
	AllowDangerousArgs bool
}

// FullPolicy is corral serve's: the hub and the agent are one process of
// the machine's owner, so the hub may do everything the agent can.
func FullPolicy() Policy {
	return Policy{Unrestricted: true, AllowRun: true, AllowClaudeArgs: true, AllowDangerousArgs: true}
}

// The flags of `corral agent` that allow what the policy denies; refusals
// name them.
const (
	FlagRoot           = "--root"
	FlagAllowRun       = "--allow-run"
	FlagAllowArgs      = "--allow-claude-args"
	FlagAllowDangerous = "--allow-dangerous-claude-args"
)

func denied(flag, format string, args ...any) error {
	return api.Errorf(api.CodePolicyDenied, "this machine's agent does not let its hub %s; its owner can allow it with `corral agent %s`",
		fmt.Sprintf(format, args...), flag)
}

// check refuses what the policy does not allow, and rewrites what it
// resolved (a session's directory) so the agent acts on what was checked.
// req points to the decoded request (backend.Mux.Decode).
func (p Policy) check(ctx context.Context, ag sessionDirs, op string, req any) error {
	switch op {
	case api.OpCreate.Name:
		a := req.(*api.CreateRequest)
		if a.Dir == "" || strings.ContainsRune(a.Dir, 0) {
			return nil // the agent says what is wrong
		}
		dir, err := p.resolveDir(a.Dir)
		if err != nil {
			// Why a path outside the roots cannot be resolved (it does not
			// exist, it may not be read) is none of the hub's business.
			if abs := p.expand(a.Dir); filepath.IsAbs(abs) && !p.lexicallyInside(abs) {
				return p.within(abs, "start a session in")
			}
			return err
		}
		if err := p.within(dir, "start a session in"); err != nil {
			return err
		}
		a.Dir = dir
		// A new worktree (a.Worktree) goes inside Dir's repository, and
		// the agent refuses one whose repository reaches out of its roots.
		return p.claudeArgs(a.Args, dir)
	case api.OpRun.Name:
		if !p.AllowRun {
			return denied(FlagAllowRun, "run commands")
		}
		return nil
	case api.OpDirs.Name:
		a := req.(*api.DirsRequest)
		if a.Path == "" || !filepath.IsAbs(a.Path) {
			return nil // the roots themselves, or the agent's bad_request
		}
		return p.within(a.Path, "list")
	case api.OpResumable.Name:
		a := req.(*api.ResumableRequest)
		if !filepath.IsAbs(a.Dir) {
			return nil // the agent's bad_request
		}
		return p.within(a.Dir, "read the conversations of")
	case api.OpDownload.Name:
		a := req.(*api.DownloadRequest)
		dir, ok := ag.sessionDir(ctx, a.ID)
		if !ok {
			return nil // the agent's not_found
		}
		return p.within(dir, "download into")
	case api.OpGitStatus.Name, api.OpGitDiff.Name:
		// Reading the repository of a session the hub already sees, as
		// its terminal and timeline show it; the agent also refuses a
		// repository that reaches outside its roots (internal/gitrepo).
		a := req.(api.SessionRequest)
		dir, ok := ag.sessionDir(ctx, a.SessionID())
		if !ok {
			return nil // the agent's not_found
		}
		return p.within(dir, "read the git repository of")
	case api.OpKill.Name, api.OpRename.Name, api.OpInput.Name, api.OpKeys.Name, api.OpAnswer.Name, api.OpRestart.Name,
		api.OpViewed.Name, api.OpCapture.Name, api.OpTimeline.Name,
		api.OpTermOpen.Name, api.OpTermClose.Name, api.OpTermResize.Name:
		// What a person does in the dashboard, on sessions the hub
		// already sees. Kill's remove_worktree removes only the worktree
		// corral made for that session, and keeps one with changes unless
		// the person forces it, as they chose.
		return nil
	}
	// Deny by default: an op this list does not name has not been
	// thought through.
	return api.Errorf(api.CodePolicyDenied, "this machine's agent has no policy for %q and refuses it", op)
}

// sessionDirs finds a session's directory.
type sessionDirs interface {
	sessionDir(ctx context.Context, id string) (string, bool)
}

// resolveDir makes a session's directory absolute ("~" is Home), for the
// check and for the agent.
func (p Policy) resolveDir(dir string) (string, error) {
	if (dir == "~" || strings.HasPrefix(dir, "~/")) && p.Home == "" {
		return "", api.Errorf(api.CodeBadRequest, "dir %q: no home directory to expand ~ in", dir)
	}
	dir = p.expand(dir)
	if !filepath.IsAbs(dir) {
		return "", api.Errorf(api.CodeBadRequest, "dir must be an absolute path, got %q", dir)
	}
	real, err := resolve(dir)
	if err != nil {
		return "", api.Errorf(api.CodeBadRequest, "directory: %v", err)
	}
	return real, nil
}

// expand makes "~" the home.
func (p Policy) expand(dir string) string {
	if (dir == "~" || strings.HasPrefix(dir, "~/")) && p.Home != "" {
		return filepath.Join(p.Home, strings.TrimPrefix(dir, "~"))
	}
	return dir
}

// lexicallyInside reports whether path, as written, lies inside a root.
func (p Policy) lexicallyInside(path string) bool {
	if p.Unrestricted {
		return true
	}
	path = filepath.Clean(path)
	for _, r := range p.Roots {
		r = filepath.Clean(r)
		if path == r || r == "/" || strings.HasPrefix(path, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// within refuses path unless it lies inside a root, symlinks resolved. It
// answers the same whether or not path exists, so the hub learns nothing
// about what lies outside.
func (p Policy) within(path, what string) error {
	if p.Unrestricted {
		return nil
	}
	if p.inside(path) {
		return nil
	}
	roots := "no directory"
	if len(p.Roots) > 0 {
		roots = strings.Join(p.Roots, ", ")
	}
	return api.Errorf(api.CodePolicyDenied, "this machine's agent does not let its hub %s %s: it serves only %s; its owner can add a directory with `corral agent %s DIR`",
		what, path, roots, FlagRoot)
}

func (p Policy) inside(path string) bool {
	if p.Unrestricted {
		return true
	}
	real, err := resolve(path)
	if err != nil {
		return false
	}
	for _, r := range p.Roots {
		rr, err := resolve(r)
		if err != nil {
			continue
		}
		if real == rr || rr == "/" || strings.HasPrefix(real, rr+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// claudeArgs refuses extra arguments for claude the policy does not allow.
func (p Policy) claudeArgs(args []string, dir string) error {
	if len(args) == 0 {
		return nil
	}
	if !p.AllowClaudeArgs && !p.AllowDangerousArgs {
		return denied(FlagAllowArgs, "pass arguments to claude (%s)", strings.Join(args, " "))
	}
	if p.AllowDangerousArgs {
		return nil
	}
	inside := func(d string) bool {
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		return p.inside(d)
	}
	if p.Unrestricted {
		inside = nil
	}
	if d := claude.DangerousArgs(args, inside); len(d) > 0 {
		return denied(FlagAllowDangerous, "pass %s to claude (it %s)", d[0].Arg, d[0].Reason)
	}
	return nil
}

// resolve cleans an absolute path and resolves its symlinks. A path that
// does not exist (yet, or any more) resolves as far as it exists, and the
// rest is taken as written.
func resolve(path string) (string, error) {
	if !filepath.IsAbs(path) || strings.ContainsRune(path, 0) {
		return "", fmt.Errorf("%q is not an absolute path", path)
	}
	path = filepath.Clean(path)
	rest := ""
	for i := 0; i < 256; i++ {
		real, err := filepath.EvalSymlinks(path)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		if _, lerr := os.Lstat(path); lerr == nil {
			// It is there, but leads nowhere: a dangling symlink, which
			// could come to lead anywhere.
			return "", fmt.Errorf("%s is a symlink to nothing", path)
		}
		parent := filepath.Dir(path)
		if parent == path {
			return "", err
		}
		rest = filepath.Join(filepath.Base(path), rest)
		path = parent
	}
	return "", fmt.Errorf("%q: too deep", path)
}
