package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/testkit/fakeapi"
)

// initRepo makes dir a git repository with one commit, as the person.
func initRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "first")
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestGitWorktreeClaude: `corral new --worktree` makes a worktree and
// starts the real claude in it; Claude's edit shows on the row, in the Git
// status and diff, and in the turn's files; kill refuses to remove the
// worktree while it holds the edit, and removes it when forced.
func TestGitWorktreeClaude(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	initRepo(t, h.proj, map[string]string{"README.md": "# app\n\nline 3\n"})
	// The agent reads repositories inside its roots only.
	h.stopServe(syscall.SIGTERM)
	h.serveArgs = append(h.serveArgs, "--root", h.proj)
	h.startServe()

	if out, err := h.corralErr("new", "--dir", h.proj, "--worktree", "../x"); err == nil || !strings.Contains(out, "not a valid branch name") && !strings.Contains(out, "branch name") {
		t.Errorf("a bad branch: %v %s", err, out)
	}
	var s api.Session
	if err := json.Unmarshal([]byte(h.corral("new", "--dir", h.proj, "--worktree", "feat/login", "--json")), &s); err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(h.proj, ".claude", "worktrees", "feat+login")
	if real, _ := filepath.EvalSymlinks(h.proj); real != h.proj {
		wt = filepath.Join(real, ".claude", "worktrees", "feat+login")
	}
	if s.Dir != wt || s.Worktree == nil || s.Worktree.Branch != "feat/login" {
		t.Fatalf("session %+v worktree %+v", s, s.Worktree)
	}
	// Claude asks to trust the new folder, or not (a parent it trusts
	// covers it); either way the person answers, never corral.
	st := h.rec.waitFor(60*time.Second, "Claude up in the worktree", func(x api.Session) bool {
		return x.ID == s.ID && (x.Status == api.StatusIdle || x.Status == api.StatusNeedsInput && x.WaitingFor != nil && x.WaitingFor.DialogID != "")
	})
	if st.Status == api.StatusNeedsInput {
		t.Logf("Claude asks %q for the worktree", st.WaitingFor.Kind)
		if _, err := h.answer(s.ID, api.AnswerRequest{Dialog: st.WaitingFor.DialogID, Choice: "yes"}); err != nil {
			t.Fatal(err)
		}
		h.waitStatus(s.ID, api.StatusIdle, 30*time.Second)
	}
	// Claude itself runs in the worktree.
	st = h.rec.waitFor(15*time.Second, "claude's pid", func(x api.Session) bool { return x.ID == s.ID && x.ClaudePID > 0 })
	if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", st.ClaudePID)); err != nil || cwd != wt {
		t.Errorf("claude runs in %q (%v), want %s", cwd, err, wt)
	}
	h.rec.waitFor(15*time.Second, "the row's branch", func(x api.Session) bool {
		return x.ID == s.ID && x.Git != nil && x.Git.Branch == "feat/login" && x.Git.Worktree && x.Git.Changed == 0
	})

	// Claude edits a file of the worktree (the person allows it).
	target := filepath.Join(wt, "README.md")
	// Claude edits only a file it has read: Read, then Edit, then done.
	step := func(n int) func(*fakeapi.Request) bool {
		return func(r *fakeapi.Request) bool { return strings.Contains(r.TurnPrompt, "EDITFILE") && r.TurnSteps == n }
	}
	h.api.PrependRule(fakeapi.Rule{Name: "read", Match: step(0), Times: 1, Reply: fakeapi.ToolUse("Read", map[string]any{"file_path": target})})
	h.api.PrependRule(fakeapi.Rule{Name: "edit", Match: step(1), Times: 1, Reply: fakeapi.ToolUse("Edit", map[string]any{
		"file_path": target, "old_string": "line 3", "new_string": "line three\nline four"})})
	h.send(s.ID, "EDITFILE please")
	st = h.rec.waitFor(30*time.Second, "the edit's permission dialog, read", func(x api.Session) bool {
		return x.ID == s.ID && x.Status == api.StatusNeedsInput && x.WaitingFor != nil && x.WaitingFor.DialogID != ""
	})
	if _, err := h.answer(s.ID, api.AnswerRequest{Dialog: st.WaitingFor.DialogID, Option: 1}); err != nil {
		t.Fatal(err)
	}
	h.waitStatus(s.ID, api.StatusReview, 30*time.Second)
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), "line four") {
		t.Fatalf("the edit did not land: %q", b)
	}
	// The row follows the edit's hooks.
	h.rec.waitFor(15*time.Second, "the row's change", func(x api.Session) bool {
		return x.ID == s.ID && x.Git != nil && x.Git.Changed == 1 && x.Git.Unstaged == 1
	})
	out := h.corral("git", s.ID)
	if !strings.Contains(out, "## feat/login (worktree)") || !strings.Contains(out, " M README.md  +2 -1") {
		t.Errorf("corral git:\n%s", out)
	}
	out = h.corral("git", s.ID, "--diff", "README.md")
	if !strings.Contains(out, "@@ -1,3 +1,4 @@") || !strings.Contains(out, "+line four") {
		t.Errorf("corral git --diff:\n%s", out)
	}
	// The turn lists its file, with Claude's own counts.
	var tl api.Timeline
	json.Unmarshal([]byte(h.corral("timeline", "--json", s.ID)), &tl)
	var files []api.TurnFile
	for _, it := range tl.Items {
		if it.Kind == api.TimelinePrompt && strings.Contains(it.Text, "EDITFILE") {
			files = it.Files
		}
	}
	if len(files) != 1 || files[0].Path != target || files[0].Added != 2 || files[0].Removed != 1 {
		t.Errorf("the turn's files %+v", files)
	}

	// Kill refuses to lose the edit, and does nothing.
	out, err := h.corralErr("kill", "--remove-worktree", s.ID)
	if err == nil || !strings.Contains(out, "README.md") || !strings.Contains(out, "uncommitted") {
		t.Errorf("kill of a dirty worktree: %v %s", err, out)
	}
	if h.lsOne(s.ID).Status == api.StatusExited {
		t.Errorf("the refused kill ended Claude")
	}
	if _, err := os.Stat(wt); err != nil {
		t.Fatalf("the refused kill removed the worktree: %v", err)
	}
	// Forced: gone, the branch kept.
	h.corral("kill", "--remove-worktree", "--force", s.ID)
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Errorf("the worktree is still there: %v", err)
	}
	gitIn(t, h.proj, "rev-parse", "--verify", "refs/heads/feat/login")
	if st := gitIn(t, h.proj, "status", "--porcelain"); st != "" {
		t.Errorf("the main tree is left with %q", st)
	}
}

// TestHubGit: an agent behind a hub answers git ops for its sessions, and
// makes and removes worktrees; its policy keeps them inside its root.
func TestHubGit(t *testing.T) {
	t.Parallel()
	hp := newHubProc(t, "127.0.0.1:0")
	alice := hp.addUser(t, "alice")
	am := newAgent(t, hp.url, hp.addDevice(t, "a1", "alice"), agentOptions{})
	initRepo(t, am.proj, map[string]string{"a.txt": "one\ntwo\n", "b file ü.txt": "b\n"})
	os.WriteFile(filepath.Join(am.proj, "a.txt"), []byte("one\nTWO\n"), 0o644)
	os.WriteFile(filepath.Join(am.proj, "new.txt"), []byte("new\n"), 0o644)
	gitIn(t, am.proj, "mv", "b file ü.txt", "c file ü.txt")
	id := am.newShell("repo")
	alice.waitSession(t, 15*time.Second, "the session's git on the hub", func(s api.Session) bool {
		return s.ID == id && s.Git != nil && s.Git.Changed == 3 && s.Git.Branch == "main"
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := alice.c.GitStatus(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]api.GitFile{}
	for _, f := range st.Files {
		got[f.Path] = f
	}
	if f := got["a.txt"]; f.Worktree != "M" || f.Unstaged == nil || *f.Unstaged != (api.GitLines{Added: 1, Removed: 1}) {
		t.Errorf("a.txt %+v", f)
	}
	if f := got["c file ü.txt"]; f.Index != "R" || f.OldPath != "b file ü.txt" {
		t.Errorf("the rename %+v", f)
	}
	if f := got["new.txt"]; !f.Untracked {
		t.Errorf("new.txt %+v", f)
	}
	d, err := alice.c.GitDiff(ctx, api.GitDiffRequest{SessionRef: api.SessionRef{ID: id}})
	if err != nil || len(d.Files) != 2 || !strings.Contains(d.Files[0].Patch, "-two\n+TWO") || d.Files[1].Status != "?" {
		t.Errorf("diff %+v %v", d, err)
	}
	code, body := alice.request(t, "GET", "/api/v1/sessions/"+id+"/git/diff?staged=true&path="+url.QueryEscape("c file ü.txt"), nil)
	if code != http.StatusOK || !strings.Contains(string(body), "rename to c file ü.txt") {
		t.Errorf("one staged file through the hub: %d %s", code, body)
	}

	// A worktree session through the hub, inside the agent's root.
	s, err := alice.c.Create(ctx, api.CreateRequest{Device: "a1", Dir: am.proj, Shell: true, Worktree: &api.NewWorktree{Branch: "hub/x"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Worktree == nil || !strings.HasSuffix(s.Dir, "/.claude/worktrees/hub+x") {
		t.Fatalf("worktree session %+v", s)
	}
	os.WriteFile(filepath.Join(s.Dir, "wip.txt"), []byte("wip\n"), 0o644)
	err = alice.c.KillWith(ctx, api.KillRequest{SessionRef: api.SessionRef{ID: s.ID}, RemoveWorktree: true})
	if !errors.Is(err, api.ErrWorktreeDirty) || !strings.Contains(err.Error(), "wip.txt") {
		t.Errorf("dirty through the hub: %v", err)
	}
	os.Remove(filepath.Join(s.Dir, "wip.txt"))
	if err := alice.c.KillWith(ctx, api.KillRequest{SessionRef: api.SessionRef{ID: s.ID}, RemoveWorktree: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("the worktree stays: %v", err)
	}

	// Outside the agent's root: a repository next to it.
	outside := filepath.Join(filepath.Dir(am.proj), filepath.Base(am.proj)+"-other")
	os.Mkdir(outside, 0o755)
	t.Cleanup(func() { os.RemoveAll(outside) })
	initRepo(t, outside, map[string]string{"x": "x\n"})
	_, err = alice.c.Create(ctx, api.CreateRequest{Device: "a1", Dir: outside, Shell: true, Worktree: &api.NewWorktree{Branch: "y"}})
	if !errors.Is(err, api.ErrPolicyDenied) {
		t.Errorf("a worktree outside the root: %v", err)
	}
}
