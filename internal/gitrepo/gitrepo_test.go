package gitrepo_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/gitrepo"
)

// fixture is a real repository in a temporary folder, and the environment
// git runs with (a HOME of its own, so no person's configuration).
type fixture struct {
	t    testing.TB
	dir  string // the repository's top
	root string // a folder holding it: the roots
	env  []string
	g    *gitrepo.Git
}

func requireGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	requireGit(t)
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	root := filepath.Join(base, "root")
	dir := filepath.Join(root, "repo")
	for _, d := range []string{home, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Test\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n"), 0o644)
	f := &fixture{t: t, dir: dir, root: root, env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}}
	f.g = gitrepo.New("", f.env)
	f.git("init", "-q")
	return f
}

// git runs git in the repository for the test's own setup.
func (f *fixture) git(args ...string) string {
	f.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = f.dir
	cmd.Env = append(f.env, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (f *fixture) write(name, content string) {
	f.t.Helper()
	p := filepath.Join(f.dir, filepath.FromSlash(name))
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) open() gitrepo.Repo {
	f.t.Helper()
	r, err := f.g.Open(ctx(f.t), f.dir, []string{f.root})
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func lines(n int, edit map[int]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if s, ok := edit[i]; ok {
			b.WriteString(s + "\n")
			continue
		}
		b.WriteString("line " + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + "\n")
	}
	return b.String()
}

const odd = "dir with space/ünïcödé näme.txt"

// every kind of change: staged, unstaged, both, untracked, renamed,
// deleted, binary, and a name with spaces and non-ASCII letters.
func (f *fixture) everyChange() {
	f.write("ten.txt", lines(10, nil))
	f.write("both.txt", lines(3, nil))
	f.write(odd, "one\ntwo\n")
	f.write("old.txt", "moving\n")
	f.write("gone.txt", "bye\n")
	f.write("pic.bin", "\x00\x01\x02")
	f.git("add", "-A")
	f.git("commit", "-qm", "first")

	f.write("ten.txt", lines(10, map[int]string{6: "CHANGED"}))        // unstaged, line 6
	f.write("both.txt", lines(3, map[int]string{1: "staged"}))         // staged ...
	f.git("add", "both.txt")                                           //
	f.write("both.txt", lines(3, map[int]string{1: "staged", 3: "z"})) // ... and changed again
	f.write(odd, "one\ntwo\nthree\n")                                  // unstaged, odd name
	f.git("mv", "old.txt", "new.txt")                                  // staged rename
	f.git("rm", "-q", "gone.txt")                                      // staged delete
	f.write("pic.bin", "\x00\x09\x09\x09")                             // unstaged binary
	f.write("new file ü.txt", "a\nb\nc")                               // untracked, no final newline
}

func find(t *testing.T, files []api.GitFile, path string) api.GitFile {
	t.Helper()
	for _, f := range files {
		if f.Path == path {
			return f
		}
	}
	t.Fatalf("no %q in %+v", path, files)
	return api.GitFile{}
}

func TestStatus(t *testing.T) {
	f := newFixture(t)
	f.everyChange()
	r := f.open()
	if r.Top != f.dir || r.Linked() {
		t.Errorf("repo %+v", r)
	}
	st, err := f.g.Status(ctx(t), r, true)
	if err != nil {
		t.Fatal(err)
	}
	if st.Branch != "main" || len(st.Head) != 40 || st.Detached || st.Root != f.dir || st.Worktree {
		t.Errorf("summary %+v", st.GitSummary)
	}
	// ten, both, odd, new (renamed), gone, pic, untracked.
	if st.Changed != 7 || st.Staged != 3 || st.Unstaged != 4 || st.Untracked != 1 || st.Truncated {
		t.Errorf("counts %+v", st.GitSummary)
	}
	check := func(path, index, wt string, staged, unstaged *api.GitLines) {
		t.Helper()
		g := find(t, st.Files, path)
		if g.Index != index || g.Worktree != wt {
			t.Errorf("%s: %s%s, want %s%s", path, g.Index, g.Worktree, index, wt)
		}
		if !equal(g.Staged, staged) || !equal(g.Unstaged, unstaged) {
			t.Errorf("%s: lines staged %+v unstaged %+v, want %+v %+v", path, g.Staged, g.Unstaged, staged, unstaged)
		}
	}
	check("ten.txt", ".", "M", nil, &api.GitLines{Added: 1, Removed: 1})
	check("both.txt", "M", "M", &api.GitLines{Added: 1, Removed: 1}, &api.GitLines{Added: 1, Removed: 1})
	check(odd, ".", "M", nil, &api.GitLines{Added: 1})
	check("gone.txt", "D", ".", &api.GitLines{Removed: 1}, nil)
	check("pic.bin", ".", "M", nil, &api.GitLines{Binary: true})
	check("new file ü.txt", "?", "?", nil, &api.GitLines{Added: 3})
	if g := find(t, st.Files, "new.txt"); g.OldPath != "old.txt" || g.Index != "R" || !equal(g.Staged, &api.GitLines{}) {
		t.Errorf("rename %+v", g)
	}
	// The summary alone is one git status, with the same counts.
	sum, err := f.g.Status(ctx(t), r, false)
	if err != nil || sum.Changed != 7 || sum.Files[0].Unstaged != nil && sum.Files[0].Staged != nil {
		t.Errorf("without lines: %+v %v", sum.GitSummary, err)
	}
}

func equal(a, b *api.GitLines) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func TestDiff(t *testing.T) {
	f := newFixture(t)
	f.everyChange()
	r := f.open()
	d, err := f.g.Diff(ctx(t), r, false, "")
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]api.GitFileDiff{}
	var order []string
	for _, fd := range d.Files {
		byPath[fd.Path] = fd
		order = append(order, fd.Path)
	}
	if !slices.Equal(order, []string{"both.txt", odd, "pic.bin", "ten.txt", "new file ü.txt"}) {
		t.Errorf("unstaged files %q", order)
	}
	// Real line numbers: line 6 of 10, with 3 lines of context.
	ten := byPath["ten.txt"]
	if !strings.Contains(ten.Patch, "\n@@ -3,7 +3,7 @@") || !strings.Contains(ten.Patch, "\n+CHANGED\n") || ten.Added != 1 || ten.Removed != 1 || ten.Status != "M" {
		t.Errorf("ten.txt: %+v", ten)
	}
	if !strings.HasPrefix(ten.Patch, "diff --git a/ten.txt b/ten.txt\n") {
		t.Errorf("a patch starts with its own header: %q", ten.Patch)
	}
	if o := byPath[odd]; !strings.Contains(o.Patch, "+++ b/"+odd) || !strings.Contains(o.Patch, "@@ -1,2 +1,3 @@") {
		t.Errorf("odd name, unquoted: %q", o.Patch)
	}
	if b := byPath["pic.bin"]; !b.Binary || b.Patch != "" {
		t.Errorf("binary: %+v", b)
	}
	u := byPath["new file ü.txt"]
	want := "diff --git a/new file ü.txt b/new file ü.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new file ü.txt\t\n@@ -0,0 +1,3 @@\n+a\n+b\n+c\n\\ No newline at end of file\n"
	if u.Status != "?" || u.Added != 3 || u.Patch != want {
		t.Errorf("untracked:\n%q\nwant\n%q", u.Patch, want)
	}
	// What git itself writes for that file, with --no-index.
	cmd := exec.Command("git", "-c", "core.quotepath=off", "diff", "--no-index", "--", "/dev/null", "new file ü.txt")
	cmd.Dir, cmd.Env = f.dir, f.env
	out, _ := cmd.Output()
	if g := regexp.MustCompile(`index 0+\.\.[0-9a-f]+\n`).ReplaceAllString(string(out), ""); g != want {
		t.Errorf("git's own:\n%q", g)
	}

	s, err := f.g.Diff(ctx(t), r, true, "")
	if err != nil {
		t.Fatal(err)
	}
	order = order[:0]
	for _, fd := range s.Files {
		order = append(order, fd.Status+" "+fd.Path)
	}
	if !slices.Equal(order, []string{"M both.txt", "D gone.txt", "R new.txt"}) || !s.Staged {
		t.Errorf("staged: %q", order)
	}
	if rn := s.Files[2]; rn.OldPath != "old.txt" || !strings.Contains(rn.Patch, "rename from old.txt\nrename to new.txt") {
		t.Errorf("rename: %+v", rn)
	}

	// One file, named as status names it.
	one, err := f.g.Diff(ctx(t), r, false, odd)
	if err != nil || len(one.Files) != 1 || one.Files[0].Path != odd {
		t.Errorf("one file: %+v %v", one, err)
	}
	one, err = f.g.Diff(ctx(t), r, false, "new file ü.txt")
	if err != nil || len(one.Files) != 1 || one.Files[0].Status != "?" {
		t.Errorf("one untracked file: %+v %v", one, err)
	}
	// A renamed file, named by its new name, is still a rename.
	one, err = f.g.Diff(ctx(t), r, true, "new.txt")
	if err != nil || len(one.Files) != 1 || one.Files[0].Status != "R" || one.Files[0].OldPath != "old.txt" {
		t.Errorf("one renamed file: %+v %v", one, err)
	}
	// A path is literal, never a pattern.
	if one, err := f.g.Diff(ctx(t), r, false, "*.txt"); err != nil || len(one.Files) != 0 {
		t.Errorf("a pattern: %+v %v", one, err)
	}
	for _, bad := range []string{"../x", "/etc/passwd", "a/../b", ".", "a\x00b"} {
		if _, err := f.g.Diff(ctx(t), r, false, bad); !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("path %q: %v", bad, err)
		}
	}
}

// An untracked symlink shows where it points, never what is there, and
// a file reached through a symlinked folder is not read.
func TestDiffSymlinks(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	f.git("add", "-A")
	f.git("commit", "-qm", "first")
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("password\n"), 0o600)
	os.Symlink(secret, filepath.Join(f.dir, "link"))
	d, err := f.g.Diff(ctx(t), f.open(), false, "")
	if err != nil || len(d.Files) != 1 {
		t.Fatalf("%+v %v", d, err)
	}
	if p := d.Files[0].Patch; strings.Contains(p, "password") || !strings.Contains(p, "new file mode 120000") || !strings.Contains(p, "+"+secret) {
		t.Errorf("symlink: %q", p)
	}
}

func TestBudget(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	f.git("add", "-A")
	f.git("commit", "-qm", "first")
	// A file bigger than the patch budget, and control characters that
	// JSON writes six bytes long.
	f.write("a.txt", strings.Repeat("0123456789abcdef\n", gitrepo.PatchBudget/17+100))
	f.write("ctl.txt", strings.Repeat("\x01\x02\x03\x04\x05\x06\x07\x08\n", 50000))
	d, err := f.g.Diff(ctx(t), f.open(), false, "")
	if err != nil {
		t.Fatal(err)
	}
	if !d.Truncated || !d.Files[0].Truncated || d.Files[0].Added != gitrepo.PatchBudget/17+100 {
		t.Errorf("not cut: truncated %v, %d lines", d.Truncated, d.Files[0].Added)
	}
	total := 0
	for _, fd := range d.Files {
		total += len(fd.Patch)
		if fd.Patch != "" && !strings.HasSuffix(fd.Patch, "\n") {
			t.Errorf("%s: cut mid-line", fd.Path)
		}
	}
	if total > gitrepo.PatchBudget {
		t.Errorf("%d bytes of patches", total)
	}
	b, _ := jsonSize(d)
	if b > gitrepo.MaxAnswer {
		t.Errorf("answer of %d bytes", b)
	}
}

func TestOpen(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	sub := filepath.Join(f.dir, "sub")
	os.Mkdir(sub, 0o755)
	r, err := f.g.Open(ctx(t), sub, []string{f.root})
	if err != nil || r.Top != f.dir {
		t.Errorf("a subfolder: %+v %v", r, err)
	}
	// Outside the roots: refused before git looks.
	other := t.TempDir()
	if _, err := f.g.Open(ctx(t), f.dir, []string{other}); !errors.Is(err, api.ErrForbidden) {
		t.Errorf("outside the roots: %v", err)
	}
	// Inside the roots, but part of a repository above them (a home kept
	// in git): its status would name files outside.
	if _, err := f.g.Open(ctx(t), sub, []string{sub}); !errors.Is(err, api.ErrForbidden) || !strings.Contains(err.Error(), "outside") {
		t.Errorf("a repository above the roots: %v", err)
	}
	// A symlink into the roots from outside is where it leads.
	link := filepath.Join(other, "in")
	os.Symlink(f.dir, link)
	if r, err := f.g.Open(ctx(t), link, []string{f.root}); err != nil || r.Top != f.dir {
		t.Errorf("a symlink in: %+v %v", r, err)
	}
	// Not a repository.
	plain := filepath.Join(f.root, "plain")
	os.Mkdir(plain, 0o755)
	if _, err := f.g.Open(ctx(t), plain, []string{f.root}); !errors.Is(err, api.ErrNotARepository) {
		t.Errorf("no repository: %v", err)
	}
	if _, err := f.g.Open(ctx(t), filepath.Join(f.dir, ".git"), []string{f.root}); !errors.Is(err, api.ErrNotARepository) {
		t.Errorf("inside .git: %v", err)
	}
	// GIT_DIR in the environment points nowhere else.
	g := gitrepo.New("", append(f.env, "GIT_DIR="+filepath.Join(other, "elsewhere"), "GIT_WORK_TREE="+other))
	if r, err := g.Open(ctx(t), f.dir, []string{f.root}); err != nil || r.Top != f.dir {
		t.Errorf("with GIT_DIR set: %+v %v", r, err)
	}
	// No git.
	g = gitrepo.New("/nonexistent/git", f.env)
	if _, err := g.Open(ctx(t), f.dir, nil); !errors.Is(err, api.ErrUnavailable) || !strings.Contains(err.Error(), "git is not installed") {
		t.Errorf("no git: %v", err)
	}
}

func TestCheckBranch(t *testing.T) {
	f := newFixture(t)
	for _, bad := range []string{"../x", "-x", "a..b", "", "a b", "x.lock", "@{-1}", "a/", "/a", "a\x01", "feat~1", "a:b", "HEAD", ".hidden", strings.Repeat("x", 201)} {
		if err := f.g.CheckBranch(ctx(t), f.dir, bad); !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	for _, good := range []string{"feat/x", "fix-1", "ü", "a.b"} {
		if err := f.g.CheckBranch(ctx(t), f.dir, good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
}

func TestWorktree(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	f.git("add", "-A")
	f.git("commit", "-qm", "first")
	first := strings.TrimSpace(f.git("rev-parse", "HEAD"))
	f.write("a.txt", "b\n")
	f.git("commit", "-qam", "second")
	r := f.open()

	w, err := f.g.AddWorktree(ctx(t), r, "feat/x", "HEAD~1")
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(f.dir, ".claude", "worktrees", "feat+x")
	if w.Path != want || w.Repo != f.dir || w.Branch != "feat/x" || w.Base != first {
		t.Errorf("worktree %+v", w)
	}
	wr, err := f.g.Open(ctx(t), w.Path, []string{f.root})
	if err != nil || !wr.Linked() || wr.Main() != f.dir {
		t.Errorf("the worktree: %+v %v", wr, err)
	}
	st, _ := f.g.Status(ctx(t), wr, false)
	if st.Branch != "feat/x" || st.Head != first || !st.Worktree || st.Changed != 0 {
		t.Errorf("its status %+v", st.GitSummary)
	}
	// The main tree does not list it.
	if st, _ := f.g.Status(ctx(t), r, false); st.Changed != 0 {
		t.Errorf("the main tree lists the worktree: %+v", st.Files)
	}
	exclude, _ := os.ReadFile(filepath.Join(f.dir, ".git", "info", "exclude"))
	if strings.Count(string(exclude), "/.claude/worktrees/") != 1 {
		t.Errorf("exclude: %q", exclude)
	}
	// A second one: excluded once, based on HEAD.
	w2, err := f.g.AddWorktree(ctx(t), r, "two", "")
	if err != nil || w2.Base == first {
		t.Errorf("second: %+v %v", w2, err)
	}
	exclude, _ = os.ReadFile(filepath.Join(f.dir, ".git", "info", "exclude"))
	if strings.Count(string(exclude), "/.claude/worktrees/") != 1 {
		t.Errorf("excluded twice: %q", exclude)
	}
	// An existing branch, a bad base, a bad name.
	if _, err := f.g.AddWorktree(ctx(t), r, "main", ""); !errors.Is(err, api.ErrConflict) {
		t.Errorf("existing branch: %v", err)
	}
	if _, err := f.g.AddWorktree(ctx(t), r, "y", "nosuch"); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("no such base: %v", err)
	}
	if _, err := f.g.AddWorktree(ctx(t), r, "y", "--orphan"); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("an option as base: %v", err)
	}
	if _, err := f.g.AddWorktree(ctx(t), r, "../../escape", ""); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("a path as branch: %v", err)
	}

	// Dirty: changed and untracked files are named.
	os.WriteFile(filepath.Join(w.Path, "a.txt"), []byte("changed\n"), 0o644)
	os.WriteFile(filepath.Join(w.Path, "new file.txt"), []byte("x\n"), 0o644)
	dirty, err := f.g.Dirty(ctx(t), w.Path)
	if err != nil || !slices.Equal(dirty, []string{"a.txt", "new file.txt"}) {
		t.Errorf("dirty %q %v", dirty, err)
	}
	if err := f.g.RemoveWorktree(ctx(t), w, false); err == nil {
		t.Errorf("git removed a dirty worktree without force")
	}
	if err := f.g.RemoveWorktree(ctx(t), w, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.Path); !os.IsNotExist(err) {
		t.Errorf("still there: %v", err)
	}
	// The branch stays; deleting it (a session that never started) is
	// another step.
	f.git("rev-parse", "--verify", "refs/heads/feat/x")
	if err := f.g.DeleteBranch(ctx(t), f.dir, "feat/x"); err != nil {
		t.Fatal(err)
	}
	if out := f.git("branch", "--list", "feat/x"); out != "" {
		t.Errorf("branch still there: %q", out)
	}
	// A clean one goes without force; one already gone is pruned.
	os.RemoveAll(w2.Path)
	if err := f.g.RemoveWorktree(ctx(t), w2, false); err != nil {
		t.Errorf("gone already: %v", err)
	}
	if out := f.git("worktree", "list"); strings.Contains(out, "two") {
		t.Errorf("not pruned: %s", out)
	}
}

// An empty repository: a status, and no worktree to start.
func TestUnborn(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	r := f.open()
	st, err := f.g.Status(ctx(t), r, true)
	if err != nil || st.Head != "" || st.Branch != "main" || st.Untracked != 1 {
		t.Errorf("%+v %v", st.GitSummary, err)
	}
	if _, err := f.g.AddWorktree(ctx(t), r, "x", ""); !errors.Is(err, api.ErrConflict) || !strings.Contains(err.Error(), "no commit") {
		t.Errorf("worktree of nothing: %v", err)
	}
}

// Reading never writes the repository: a status whose index is stale would
// refresh and rewrite it (taking index.lock, which makes a commit of
// Claude's or the person's fail meanwhile) without --no-optional-locks.
func TestReadsWriteNothing(t *testing.T) {
	f := newFixture(t)
	f.write("a.txt", "a\n")
	f.git("add", "-A")
	f.git("commit", "-qm", "first")
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(f.dir, "a.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(f.dir, ".git", "index")
	before, err := os.Stat(index)
	if err != nil {
		t.Fatal(err)
	}
	r := f.open()
	if _, err := f.g.Status(ctx(t), r, true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.g.Diff(ctx(t), r, false, ""); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(index)
	if !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
		t.Errorf("the index was rewritten: %v -> %v", before.ModTime(), after.ModTime())
	}
	// The person's own git status does rewrite it (so the test can fail).
	f.git("status", "--porcelain")
	if again, _ := os.Stat(index); again.ModTime().Equal(before.ModTime()) {
		t.Errorf("git status left a stale index alone; this test shows nothing")
	}
}
