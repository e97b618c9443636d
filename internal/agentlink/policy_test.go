package agentlink

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/api"
)

type dirs map[string]string

func (d dirs) sessionDir(_ context.Context, id string) (string, bool) {
	v, ok := d[id]
	return v, ok
}

func TestPolicy(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	out := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "app"), out} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(out, filepath.Join(root, "escape"))
	os.Symlink(filepath.Join(root, "app"), filepath.Join(out, "back-in"))
	os.Symlink(filepath.Join(base, "nothing"), filepath.Join(root, "dangling"))
	sessions := dirs{"in": filepath.Join(root, "app"), "out": out}
	p := Policy{Roots: []string{root}, Home: root}
	ctx := context.Background()

	check := func(op string, args any) error { return p.check(ctx, sessions, op, args) }
	denied := func(what string, err error, flag string) {
		t.Helper()
		if !errors.Is(err, api.ErrPolicyDenied) || !strings.Contains(err.Error(), "corral agent "+flag) {
			t.Errorf("%s: %v, want policy_denied naming %s", what, err, flag)
		}
	}
	allowed := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}

	// Creating: inside the roots, symlinks resolved, ~ expanded; the
	// request is rewritten to what was checked.
	cr := &api.CreateRequest{Dir: filepath.Join(out, "back-in")}
	allowed("a symlink from outside into the roots", check(api.OpCreate.Name, cr))
	if cr.Dir != filepath.Join(root, "app") {
		t.Errorf("the dir was not rewritten to the resolved one: %s", cr.Dir)
	}
	cr = &api.CreateRequest{Dir: "~/app"}
	allowed("~/app", check(api.OpCreate.Name, cr))
	if cr.Dir != filepath.Join(root, "app") {
		t.Errorf("~/app became %s", cr.Dir)
	}
	for _, d := range []string{"/", out, filepath.Join(root, "escape"), filepath.Join(root, "app", "..", ".."), filepath.Join(root, "dangling")} {
		err := check(api.OpCreate.Name, &api.CreateRequest{Dir: d})
		if !errors.Is(err, api.ErrPolicyDenied) && !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("create in %s: %v, want refused", d, err)
		}
	}
	denied("a root's look-alike", check(api.OpCreate.Name, &api.CreateRequest{Dir: root + "-evil"}), "--root")
	// Outside the roots, a folder that does not exist, one that may not be
	// read and a dangling symlink all get the same answer.
	os.Symlink(filepath.Join(base, "nothing"), filepath.Join(out, "dangling"))
	locked := filepath.Join(out, "locked")
	os.MkdirAll(filepath.Join(locked, "in"), 0o700)
	os.Chmod(locked, 0)
	defer os.Chmod(locked, 0o700)
	for _, d := range []string{filepath.Join(out, "nosuch"), filepath.Join(out, "dangling"), filepath.Join(locked, "in")} {
		denied("create in "+d, check(api.OpCreate.Name, &api.CreateRequest{Dir: d}), "--root")
	}

	// Listing and resumable: the same whether or not the path exists.
	denied("dirs /", check(api.OpDirs.Name, &api.DirsRequest{Path: "/"}), "--root")
	denied("dirs of a missing path outside", check(api.OpDirs.Name, &api.DirsRequest{Path: filepath.Join(out, "no", "such")}), "--root")
	allowed("dirs of a missing path inside", check(api.OpDirs.Name, &api.DirsRequest{Path: filepath.Join(root, "no", "such")}))
	allowed("dirs of the roots", check(api.OpDirs.Name, &api.DirsRequest{Path: ""}))
	denied("resumable of a symlink out", check(api.OpResumable.Name, &api.ResumableRequest{Dir: filepath.Join(root, "escape")}), "--root")
	allowed("resumable inside", check(api.OpResumable.Name, &api.ResumableRequest{Dir: filepath.Join(root, "app")}))

	// Downloads go into the session's directory, which must be inside.
	denied("a download into a session outside", check(api.OpDownload.Name, &api.DownloadRequest{SessionRef: api.SessionRef{ID: "out"}}), "--root")
	allowed("a download into a session inside", check(api.OpDownload.Name, &api.DownloadRequest{SessionRef: api.SessionRef{ID: "in"}}))
	allowed("a download into no session (the agent says not_found)", check(api.OpDownload.Name, &api.DownloadRequest{SessionRef: api.SessionRef{ID: "nosuch"}}))

	// Git: the repository of a session inside the roots.
	denied("git status of a session outside", check(api.OpGitStatus.Name, &api.SessionRef{ID: "out"}), "--root")
	denied("git diff of a session outside", check(api.OpGitDiff.Name, &api.GitDiffRequest{SessionRef: api.SessionRef{ID: "out"}}), "--root")
	allowed("git status of a session inside", check(api.OpGitStatus.Name, &api.SessionRef{ID: "in"}))
	allowed("git diff of a session inside", check(api.OpGitDiff.Name, &api.GitDiffRequest{SessionRef: api.SessionRef{ID: "in"}, Staged: true}))
	allowed("git status of no session (the agent says not_found)", check(api.OpGitStatus.Name, &api.SessionRef{ID: "nosuch"}))
	allowed("kill, removing the worktree", check(api.OpKill.Name, &api.KillRequest{SessionRef: api.SessionRef{ID: "in"}, RemoveWorktree: true, Force: true}))
	allowed("a session in a new worktree, inside", check(api.OpCreate.Name, &api.CreateRequest{Dir: filepath.Join(root, "app"), Worktree: &api.NewWorktree{Branch: "x"}}))
	denied("a session in a new worktree, outside", check(api.OpCreate.Name, &api.CreateRequest{Dir: out, Worktree: &api.NewWorktree{Branch: "x"}}), "--root")

	// Run and claude arguments: off unless allowed.
	denied("run", check(api.OpRun.Name, &api.RunRequest{SessionRef: api.SessionRef{ID: "in"}}), "--allow-run")
	denied("claude args", check(api.OpCreate.Name, &api.CreateRequest{Dir: root, Args: []string{"--model", "x"}}), "--allow-claude-args")
	p.AllowRun, p.AllowClaudeArgs = true, true
	allowed("run, allowed", check(api.OpRun.Name, &api.RunRequest{SessionRef: api.SessionRef{ID: "in"}}))
	allowed("claude args, allowed", check(api.OpCreate.Name, &api.CreateRequest{Dir: root, Args: []string{"--model", "x", "--add-dir", "app"}}))
	denied("--dangerously-skip-permissions", check(api.OpCreate.Name, &api.CreateRequest{Dir: root, Args: []string{"--dangerously-skip-permissions"}}), "--allow-dangerous-claude-args")
	denied("--add-dir out of the roots", check(api.OpCreate.Name, &api.CreateRequest{Dir: root, Args: []string{"--add-dir", "escape"}}), "--allow-dangerous-claude-args")
	p.AllowDangerousArgs = true
	allowed("--dangerously-skip-permissions, allowed", check(api.OpCreate.Name, &api.CreateRequest{Dir: root, Args: []string{"--dangerously-skip-permissions"}}))

	// Always allowed: what a person does in the dashboard.
	for _, op := range []string{api.OpKill.Name, api.OpRename.Name, api.OpInput.Name, api.OpKeys.Name, api.OpAnswer.Name, api.OpRestart.Name, api.OpViewed.Name,
		api.OpCapture.Name, api.OpTimeline.Name, api.OpTermOpen.Name, api.OpTermClose.Name, api.OpTermResize.Name} {
		allowed(op, check(op, nil))
	}
	// Deny by default: an op the policy does not know.
	if err := check("frobnicate", nil); !errors.Is(err, api.ErrPolicyDenied) {
		t.Errorf("an op the policy does not know: %v", err)
	}

	// corral serve: everything.
	full := FullPolicy()
	if err := full.check(ctx, sessions, api.OpCreate.Name, &api.CreateRequest{Dir: "/", Args: []string{"--dangerously-skip-permissions"}}); err != nil {
		t.Errorf("full policy: %v", err)
	}
	if err := full.check(ctx, sessions, api.OpRun.Name, &api.RunRequest{}); err != nil {
		t.Errorf("full policy: %v", err)
	}
}

// Every op the hub may send has a rule of its own; the local ops and the
// user ops, which a hub answers itself, have none and are refused.
func TestPolicyCoversOps(t *testing.T) {
	p := Policy{Roots: []string{t.TempDir()}}
	for _, o := range api.Ops() {
		err := p.check(context.Background(), dirs{}, o.Name, reflect.New(o.Request).Interface())
		noRule := err != nil && strings.Contains(err.Error(), "has no policy")
		if noRule != (o.Scope == api.ScopeLocal || o.Scope == api.ScopeUser) {
			t.Errorf("%s (%s): %v", o.Name, o.Scope, err)
		}
	}
}

// The zero policy with no roots lets the hub start nothing anywhere.
func TestPolicyNoRoots(t *testing.T) {
	var p Policy
	err := p.check(context.Background(), dirs{}, api.OpCreate.Name, &api.CreateRequest{Dir: t.TempDir()})
	if !errors.Is(err, api.ErrPolicyDenied) || !strings.Contains(err.Error(), "no directory") {
		t.Errorf("%v", err)
	}
}

func TestResolve(t *testing.T) {
	base := t.TempDir()
	real, _ := filepath.EvalSymlinks(base)
	os.Symlink(filepath.Join(base, "a"), filepath.Join(base, "link"))
	os.Mkdir(filepath.Join(base, "a"), 0o700)
	for in, want := range map[string]string{
		base:                                    real,
		filepath.Join(base, "link"):             filepath.Join(real, "a"),
		filepath.Join(base, "link", "new", "x"): filepath.Join(real, "a", "new", "x"),
		filepath.Join(base, "missing", "..", "a"): filepath.Join(real, "a"),
	} {
		got, err := resolve(in)
		if err != nil || got != want {
			t.Errorf("resolve(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"relative", "", "/a\x00b"} {
		if _, err := resolve(bad); err == nil {
			t.Errorf("resolve(%q) took it", bad)
		}
	}
}
