package agent_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/api"
)

// gitRig is a rig whose project is a real git repository inside the
// agent's roots, with a git that logs every command it runs.
type gitRig struct {
	*rig
	gitLog string
}

func testDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// git runs git in the project, as the person (not through corral).
func (g *gitRig) git(args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = g.proj
	cmd.Env = []string{"HOME=" + g.home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (g *gitRig) write(name, content string) {
	g.t.Helper()
	if err := os.WriteFile(filepath.Join(g.proj, name), []byte(content), 0o644); err != nil {
		g.t.Fatal(err)
	}
}

// statuses counts the git status commands corral ran.
func (g *gitRig) statuses() int {
	b, _ := os.ReadFile(g.gitLog)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if l == "status" {
			n++
		}
	}
	return n
}

// gitSession waits for an event that shows session id's git as cond wants.
func (w *watcher) git(id, what string, cond func(*api.GitSummary) bool) api.Session {
	w.t.Helper()
	return *w.waitFor(15*time.Second, id+": "+what, func(ev api.Event) bool {
		return ev.Type == api.EventSession && ev.Session.ID == id && cond(ev.Session.Git)
	}).Session
}

// newRepoRig: the rig's project is a repository with one commit, inside
// the roots (the rig's roots are set to the project's parent).
func newRepoRig(t *testing.T) *gitRig {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	bin := testDir(t)
	log := filepath.Join(bin, "git.log")
	wrapper := filepath.Join(bin, "git")
	script := "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in -c|--no-pager|--no-optional-locks|core.*|color.*|diff.*|log.*) ;; *) echo \"$a\" >> " + log + "; break;; esac; done\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	g := &gitRig{gitLog: log}
	// The repository must exist before the agent starts: newRig makes the
	// project folder, so the rig is made first, with roots that hold it.
	g.rig = newRig(t, func(c *agent.Config) { c.GitBin = wrapper })
	g.a.Close()
	g.a = nil
	g.cfg.Roots = []string{filepath.Dir(g.proj)}
	g.git("init", "-q", "-b", "main")
	g.write("a.txt", "one\ntwo\nthree\n")
	g.git("add", "-A")
	g.git("commit", "-qm", "first")
	g.start()
	return g
}

// A session's row shows its branch and changed files, refreshed after the
// hooks that may change them; sessions of one repository share a refresh.
func TestGitSummary(t *testing.T) {
	t.Parallel()
	g := newRepoRig(t)
	w := g.watch()
	s := g.shell("top")
	got := w.git(s.ID, "a clean main", func(gs *api.GitSummary) bool { return gs != nil && gs.Branch == "main" })
	if gs := got.Git; gs.Changed != 0 || gs.Root != g.proj || len(gs.Head) != 40 || gs.Worktree {
		t.Errorf("summary %+v", gs)
	}
	// A second session, in a subfolder of the same repository.
	sub := filepath.Join(g.proj, "sub")
	os.Mkdir(sub, 0o755)
	s2, err := g.a.Create(ctxT(t), api.CreateRequest{Dir: sub, Name: "sub", Shell: true})
	if err != nil {
		t.Fatal(err)
	}
	w.git(s2.ID, "the subfolder's repository", func(gs *api.GitSummary) bool { return gs != nil && gs.Root == g.proj })

	// Claude edits (the hooks say so): one refresh for both, after the
	// burst, not one per hook.
	before := g.statuses()
	g.write("a.txt", "one\nTWO\nthree\n")
	g.write("new.txt", "new\n")
	for i := 0; i < 5; i++ {
		for _, id := range []string{s.ID, s2.ID} {
			g.sendHook(header(id), payload{"session_id": "c1", "hook_event_name": "PostToolUse", "tool_name": "Edit"})
		}
	}
	seen := map[string]bool{}
	w.waitFor(15*time.Second, "both sessions to show 2 changes", func(ev api.Event) bool {
		if ev.Type == api.EventSession && ev.Session.Git != nil && ev.Session.Git.Changed == 2 {
			seen[ev.Session.ID] = true
		}
		return seen[s.ID] && seen[s2.ID]
	})
	if n := g.statuses() - before; n != 1 {
		t.Errorf("%d git status runs for 10 hooks of 2 sessions in one repository, want 1", n)
	}
	// A hook that changes nothing (a Read) does not refresh.
	before = g.statuses()
	g.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "PostToolUse", "tool_name": "Read"})
	// The end of the turn does: staged now.
	g.git("add", "a.txt")
	g.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "Stop"})
	got = w.git(s.ID, "one staged", func(gs *api.GitSummary) bool { return gs != nil && gs.Staged == 1 })
	if gs := got.Git; gs.Changed != 2 || gs.Untracked != 1 || gs.Unstaged != 0 {
		t.Errorf("after staging: %+v", gs)
	}
	if n := g.statuses() - before; n != 1 {
		t.Errorf("%d status runs for a Read and a Stop, want 1", n)
	}

	// On demand: the op reads it now, line counts and all, and the row
	// follows.
	g.write("new.txt", "new\nnewer\n")
	st, err := g.a.GitStatus(ctxT(t), api.SessionRef{ID: s2.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Files) != 2 || st.Files[0].Path != "a.txt" || st.Files[0].Staged == nil || *st.Files[0].Staged != (api.GitLines{Added: 1, Removed: 1}) ||
		st.Files[1].Path != "new.txt" || st.Files[1].Unstaged == nil || st.Files[1].Unstaged.Added != 2 {
		t.Errorf("status %+v", st.Files)
	}
	d, err := g.a.GitDiff(ctxT(t), api.GitDiffRequest{SessionRef: api.SessionRef{ID: s.ID}, Staged: true})
	if err != nil || len(d.Files) != 1 || !strings.Contains(d.Files[0].Patch, "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n") {
		t.Errorf("staged diff %+v %v", d, err)
	}
	if _, err := g.a.GitDiff(ctxT(t), api.GitDiffRequest{SessionRef: api.SessionRef{ID: s.ID}, Path: "../x"}); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("a path out: %v", err)
	}

	// A commit in the person's own terminal, then the branch switched:
	// the next Stop shows both.
	g.git("commit", "-qam", "second")
	g.git("checkout", "-qb", "other")
	g.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "Stop"})
	w.git(s.ID, "branch other", func(gs *api.GitSummary) bool { return gs != nil && gs.Branch == "other" && gs.Staged == 0 })
}

// No repository, no field; a repository outside the roots, neither field
// nor op.
func TestGitNone(t *testing.T) {
	t.Parallel()
	g := newRepoRig(t)
	plain := filepath.Join(filepath.Dir(g.proj), "plain")
	os.Mkdir(plain, 0o755)
	s, err := g.a.Create(ctxT(t), api.CreateRequest{Dir: plain, Shell: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.a.GitStatus(ctxT(t), api.SessionRef{ID: s.ID}); !errors.Is(err, api.ErrNotARepository) {
		t.Errorf("no repository: %v", err)
	}
	// Outside the roots: corral serve may start a session anywhere, but
	// the agent reads repositories only inside its roots.
	out := testDir(t)
	cmd := exec.Command("git", "init", "-q", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, b)
	}
	o, err := g.a.Create(ctxT(t), api.CreateRequest{Dir: out, Shell: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.a.GitStatus(ctxT(t), api.SessionRef{ID: o.ID}); !errors.Is(err, api.ErrForbidden) {
		t.Errorf("outside the roots: %v", err)
	}
	if _, err := g.a.GitDiff(ctxT(t), api.GitDiffRequest{SessionRef: api.SessionRef{ID: o.ID}}); !errors.Is(err, api.ErrForbidden) {
		t.Errorf("diff outside the roots: %v", err)
	}
	// A session inside a repository gets its field; those two never do.
	in := g.shell("in")
	w := g.watch()
	g.sendHook(header(in.ID), payload{"session_id": "c1", "hook_event_name": "Stop"})
	g.sendHook(header(s.ID), payload{"session_id": "c2", "hook_event_name": "Stop"})
	g.sendHook(header(o.ID), payload{"session_id": "c3", "hook_event_name": "Stop"})
	waitUntil(t, 15*time.Second, "the repository's session to show git", func() bool {
		got, _ := g.a.Session(ctxT(t), api.SessionRef{ID: in.ID})
		return got.Git != nil
	})
	for _, id := range []string{s.ID, o.ID} {
		if got, _ := g.a.Session(ctxT(t), api.SessionRef{ID: id}); got.Git != nil {
			t.Errorf("%s: git %+v", id, got.Git)
		}
	}
	for _, ev := range w.drain() {
		if ev.Session != nil && ev.Session.ID != in.ID && ev.Session.Git != nil {
			t.Errorf("an event with git for %s", ev.Session.ID)
		}
	}
}

// A session in a new worktree: made, started there, remembered across a
// restart, and removed on kill only when nothing would be lost.
func TestGitWorktreeSession(t *testing.T) {
	t.Parallel()
	g := newRepoRig(t)
	w := g.watch()
	for _, bad := range []string{"../x", "-x", "a..b"} {
		_, err := g.a.Create(ctxT(t), api.CreateRequest{Dir: g.proj, Shell: true, Worktree: &api.NewWorktree{Branch: bad}})
		if !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("branch %q: %v", bad, err)
		}
	}
	if _, err := g.a.Create(ctxT(t), api.CreateRequest{Dir: g.proj, Shell: true, Worktree: &api.NewWorktree{Branch: "x", Base: "nosuch"}}); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("a bad base: %v", err)
	}
	s, err := g.a.Create(ctxT(t), api.CreateRequest{Dir: g.proj, Shell: true, Worktree: &api.NewWorktree{Branch: "feat/x"}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(g.proj, ".claude", "worktrees", "feat+x")
	if s.Dir != path || s.Worktree == nil || s.Worktree.Branch != "feat/x" || s.Worktree.Repo != g.proj || s.Name != "feat/x" {
		t.Fatalf("session %+v worktree %+v", s, s.Worktree)
	}
	// Its pane runs there.
	res, err := g.a.Run(ctxT(t), api.RunRequest{SessionRef: api.SessionRef{ID: s.ID}, Argv: []string{"pwd"}})
	if err != nil || strings.TrimSpace(res.Output) != path {
		t.Errorf("pwd: %q %v", res.Output, err)
	}
	w.git(s.ID, "the worktree's branch", func(gs *api.GitSummary) bool { return gs != nil && gs.Branch == "feat/x" && gs.Worktree })
	// A second branch of the same name is refused; so is resuming into a worktree.
	if _, err := g.a.Create(ctxT(t), api.CreateRequest{Dir: g.proj, Shell: true, Worktree: &api.NewWorktree{Branch: "feat/x"}}); !errors.Is(err, api.ErrConflict) {
		t.Errorf("the same branch again: %v", err)
	}
	// Remembered across a restart of the agent.
	g.restart()
	got, err := g.a.Session(ctxT(t), api.SessionRef{ID: s.ID})
	if err != nil || got.Worktree == nil || got.Worktree.Path != path {
		t.Fatalf("after restart: %+v %v", got.Worktree, err)
	}
	// A session without a worktree of corral's has none to remove.
	plain := g.shell("plain")
	if err := g.a.KillWith(ctxT(t), api.KillRequest{SessionRef: api.SessionRef{ID: plain.ID}, RemoveWorktree: true}); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("remove a worktree that is not corral's: %v", err)
	}

	// Dirty: refused, naming the files, and nothing done.
	os.WriteFile(filepath.Join(path, "a.txt"), []byte("changed\n"), 0o644)
	os.WriteFile(filepath.Join(path, "notes ü.txt"), []byte("x\n"), 0o644)
	err = g.a.KillWith(ctxT(t), api.KillRequest{SessionRef: api.SessionRef{ID: s.ID}, RemoveWorktree: true})
	if !errors.Is(err, api.ErrWorktreeDirty) || !strings.Contains(err.Error(), "a.txt") || !strings.Contains(err.Error(), "notes ü.txt") {
		t.Errorf("dirty: %v", err)
	}
	if _, err := g.a.Session(ctxT(t), api.SessionRef{ID: s.ID}); err != nil {
		t.Errorf("the session went with a refused kill: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the worktree went with a refused kill: %v", err)
	}
	// Committed: it goes, and its branch stays.
	cmd := exec.Command("sh", "-c", "git add -A && git commit -qm wip")
	cmd.Dir = path
	cmd.Env = []string{"HOME=" + g.home, "PATH=" + os.Getenv("PATH"), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e"}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, b)
	}
	if err := g.a.KillWith(ctxT(t), api.KillRequest{SessionRef: api.SessionRef{ID: s.ID}, RemoveWorktree: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the worktree stays: %v", err)
	}
	g.git("rev-parse", "--verify", "refs/heads/feat/x")
	if _, err := g.a.Session(ctxT(t), api.SessionRef{ID: s.ID}); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("the session stays: %v", err)
	}

	// Forced: changes and all.
	f, err := g.a.Create(ctxT(t), api.CreateRequest{Dir: g.proj, Shell: true, Worktree: &api.NewWorktree{Branch: "forced", Base: "main"}})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(f.Dir, "lost.txt"), []byte("x\n"), 0o644)
	if err := g.a.KillWith(ctxT(t), api.KillRequest{SessionRef: api.SessionRef{ID: f.ID}, RemoveWorktree: true, Force: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.Dir); !os.IsNotExist(err) {
		t.Errorf("forced, the worktree stays: %v", err)
	}
	// Killed without removing: the worktree stays for the person.
	k, err := g.a.Create(ctxT(t), api.CreateRequest{Dir: g.proj, Shell: true, Worktree: &api.NewWorktree{Branch: "kept"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.a.Kill(ctxT(t), api.SessionRef{ID: k.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(k.Dir); err != nil {
		t.Errorf("a plain kill removed the worktree: %v", err)
	}
	// The main tree's status never listed the worktrees.
	if st, err := g.a.GitStatus(ctxT(t), api.SessionRef{ID: plain.ID}); err != nil || st.Changed != 0 {
		t.Errorf("main tree: %+v %v", st.Files, err)
	}
}
