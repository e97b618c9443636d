package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// tree makes root/{Beta/, alpha/, zeta.txt, Apple.txt, in -> alpha,
// out -> outside, outfile -> outside/secret, dangling -> missing} and
// an outside directory with a secret.
func tree(t *testing.T) (root, outside string) {
	t.Helper()
	base := testio.TempDir(t, "corral-tree-")
	root = filepath.Join(base, "root")
	outside = filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "Beta"), filepath.Join(root, "alpha", "deep")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(root, "zeta.txt"), filepath.Join(root, "Apple.txt"), filepath.Join(outside, "secret")} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"in":       filepath.Join(root, "alpha"),
		"out":      outside,
		"outfile":  filepath.Join(outside, "secret"),
		"dangling": filepath.Join(root, "missing"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func TestListDir(t *testing.T) {
	t.Parallel()
	root, outside := tree(t)
	r := newRig(t, func(c *agent.Config) { c.Roots = []string{root} })
	ctx := ctxT(t)

	l, err := r.a.ListDir(ctx, api.DirsRequest{Path: root})
	if err != nil {
		t.Fatal(err)
	}
	if l.Path != root || l.Parent != "" {
		t.Errorf("root listing: path %q parent %q; want %q and no parent (it is the root)", l.Path, l.Parent, root)
	}
	var names []string
	for _, e := range l.Entries {
		names = append(names, e.Name)
		if e.Path != filepath.Join(root, e.Name) {
			t.Errorf("entry %s has path %q", e.Name, e.Path)
		}
	}
	// Directories first, then files, each case-insensitively sorted; links
	// that leave the root are left out; a link inside it counts as a
	// directory.
	if got, want := strings.Join(names, ","), "alpha,Beta,in,Apple.txt,zeta.txt"; got != want {
		t.Errorf("entries %s, want %s", got, want)
	}
	for _, e := range l.Entries {
		if wantDir := !strings.HasSuffix(e.Name, ".txt"); e.IsDir != wantDir {
			t.Errorf("%s: is_dir %v", e.Name, e.IsDir)
		}
	}

	// The empty path is the single root.
	if l2, err := r.a.ListDir(ctx, api.DirsRequest{}); err != nil || l2.Path != root {
		t.Errorf(`ListDir("") = %+v, %v; want the root`, l2, err)
	}

	sub, err := r.a.ListDir(ctx, api.DirsRequest{Path: filepath.Join(root, "alpha")})
	if err != nil {
		t.Fatal(err)
	}
	if sub.Parent != root || len(sub.Entries) != 1 || sub.Entries[0].Name != "deep" {
		t.Errorf("alpha listing: %+v", sub)
	}
	// Through the inner link: resolved to its target.
	if vl, err := r.a.ListDir(ctx, api.DirsRequest{Path: filepath.Join(root, "in")}); err != nil || vl.Path != filepath.Join(root, "alpha") {
		t.Errorf("listing through an inner link: %+v, %v", vl, err)
	}
	// `..` inside the root is fine once cleaned.
	if dl, err := r.a.ListDir(ctx, api.DirsRequest{Path: filepath.Join(root, "alpha") + "/deep/.."}); err != nil || dl.Path != filepath.Join(root, "alpha") {
		t.Errorf("alpha/deep/..: %+v, %v", dl, err)
	}

	refused := []struct {
		path string
		want error
	}{
		{root + "/..", api.ErrForbidden},
		{root + "/alpha/../../outside", api.ErrForbidden},
		{filepath.Join(root, "out"), api.ErrForbidden},
		{outside, api.ErrForbidden},
		{"/", api.ErrForbidden},
		{root + "-sibling", api.ErrForbidden},
		{"relative/path", api.ErrBadRequest},
		{root + "\x00", api.ErrBadRequest},
		{filepath.Join(root, "missing"), api.ErrNotFound},
		{filepath.Join(root, "dangling"), api.ErrNotFound},
		{filepath.Join(root, "zeta.txt"), api.ErrBadRequest},
	}
	for _, rf := range refused {
		_, err := r.a.ListDir(ctx, api.DirsRequest{Path: rf.path})
		if !errors.Is(err, rf.want) {
			t.Errorf("ListDir(%q) = %v, want %v", rf.path, err, rf.want.(*api.Error).Code)
		}
	}
	// Outside the roots, a path that exists and one that does not get
	// the same answer: listing is no oracle for what is there.
	for _, pair := range [][2]string{
		{outside, filepath.Join(filepath.Dir(outside), "nothing")},
		{filepath.Join(outside, "secret"), filepath.Join(outside, "nosecret")},
		{filepath.Join(root, "out", "secret"), filepath.Join(root, "out", "nosecret")},
		{filepath.Join(root, "outfile"), filepath.Join(root, "out", "no", "such", "dir")},
		{"/etc/passwd", "/etc/no-such-file"},
	} {
		_, e1 := r.a.ListDir(ctx, api.DirsRequest{Path: pair[0]})
		_, e2 := r.a.ListDir(ctx, api.DirsRequest{Path: pair[1]})
		if !errors.Is(e1, api.ErrForbidden) || !errors.Is(e2, api.ErrForbidden) {
			t.Errorf("outside the root: %s (exists) = %v; %s (does not) = %v; want forbidden for both", pair[0], e1, pair[1], e2)
		}
	}
	// A dangling link inside the root that points outside is outside.
	if err := os.Symlink(filepath.Join(outside, "missing"), filepath.Join(root, "dangout")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.a.ListDir(ctx, api.DirsRequest{Path: filepath.Join(root, "dangout", "x")}); !errors.Is(err, api.ErrForbidden) {
		t.Errorf("through a dangling link that points outside: %v, want forbidden", err)
	}
	// A sibling directory whose name extends the root's is outside it.
	if err := os.Mkdir(root+"-sibling", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := r.a.ListDir(ctx, api.DirsRequest{Path: root + "-sibling"}); !errors.Is(err, api.ErrForbidden) {
		t.Errorf("ListDir(root-sibling) = %v, want forbidden", err)
	}
}

func TestListDirSeveralRoots(t *testing.T) {
	t.Parallel()
	a, _ := tree(t)
	b, _ := tree(t)
	r := newRig(t, func(c *agent.Config) { c.Roots = []string{a, b} })
	ctx := ctxT(t)
	l, err := r.a.ListDir(ctx, api.DirsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Path != "" || l.Parent != "" || len(l.Entries) != 2 {
		t.Fatalf("roots listing = %+v", l)
	}
	for i, want := range []string{a, b} {
		if e := l.Entries[i]; e.Path != want || !e.IsDir {
			t.Errorf("root entry %d = %+v, want %s", i, e, want)
		}
	}
	for _, root := range []string{a, b} {
		if _, err := r.a.ListDir(ctx, api.DirsRequest{Path: filepath.Join(root, "alpha")}); err != nil {
			t.Errorf("listing inside root %s: %v", root, err)
		}
	}
	// A link from one root into the other stays allowed.
	if err := os.Symlink(filepath.Join(b, "Beta"), filepath.Join(a, "tob")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.a.ListDir(ctx, api.DirsRequest{Path: filepath.Join(a, "tob")}); err != nil {
		t.Errorf("link from one root into another: %v", err)
	}
}

func TestListDirDefaultsToHome(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	l, err := r.a.ListDir(ctxT(t), api.DirsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Path != r.home {
		t.Errorf("default root = %q, want the home %q", l.Path, r.home)
	}
	if _, err := r.a.ListDir(ctxT(t), api.DirsRequest{Path: r.proj}); !errors.Is(err, api.ErrForbidden) {
		t.Errorf("a directory outside the home: %v, want forbidden", err)
	}
}

func TestResumable(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := ctxT(t)
	folder := claude.ProjectDir(filepath.Join(r.home, ".claude"), r.proj)
	if err := os.MkdirAll(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(id, content string, age time.Duration) {
		p := filepath.Join(folder, id+".jsonl")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(-age)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	user := func(text string) string {
		return `{"type":"user","message":{"role":"user","content":"` + text + `"},"uuid":"u-` + text + `"}` + "\n"
	}
	const older, newer = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	write(older, user("fix the bug")+user("and the test"), 2*time.Hour)
	write(newer, user("write docs"), time.Hour)
	write("33333333-3333-4333-8333-333333333333", "", 0)                     // empty: left out
	write("agent-44444444", user("a subagent"), 0)                           // subagent: left out
	write("55555555-5555-4555-8555-555555555555", `{"type":"mode"}`+"\n", 0) // no prompt: left out

	list, err := r.a.Resumable(ctx, api.ResumableRequest{Dir: r.proj})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != newer || list[1].ID != older {
		t.Fatalf("Resumable = %+v, want %s then %s", list, newer, older)
	}
	if list[1].FirstPrompt != "fix the bug" || list[1].LastPrompt != "and the test" || list[1].Size == 0 {
		t.Errorf("older entry = %+v", list[1])
	}
	if !strings.HasPrefix(list[0].Path, folder) {
		t.Errorf("path %q not in %s", list[0].Path, folder)
	}

	// A trailing slash or a `.` is the same directory.
	if again, err := r.a.Resumable(ctx, api.ResumableRequest{Dir: r.proj + "/./"}); err != nil || len(again) != 2 {
		t.Errorf("Resumable(dir/./) = %d entries, %v", len(again), err)
	}
	empty, err := r.a.Resumable(ctx, api.ResumableRequest{Dir: r.home})
	if err != nil || empty == nil || len(empty) != 0 {
		t.Errorf("a directory without transcripts: %#v, %v; want an empty list", empty, err)
	}
	if _, err := r.a.Resumable(ctx, api.ResumableRequest{Dir: "relative"}); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("relative dir: %v, want bad_request", err)
	}
}
