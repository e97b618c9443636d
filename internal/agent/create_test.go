package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/api"
)

func TestCreateValidates(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	file := filepath.Join(r.proj, "file.txt")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  api.CreateRequest
		want string // in the message
	}{
		{"no dir", api.CreateRequest{Shell: true}, "dir is required"},
		{"relative dir", api.CreateRequest{Dir: "proj", Shell: true}, "absolute"},
		{"dot-relative dir", api.CreateRequest{Dir: "./proj", Shell: true}, "absolute"},
		{"missing dir", api.CreateRequest{Dir: filepath.Join(r.proj, "missing"), Shell: true}, "does not exist"},
		{"file, not dir", api.CreateRequest{Dir: file, Shell: true}, "not a directory"},
		{"NUL in dir", api.CreateRequest{Dir: r.proj + "\x00x", Shell: true}, "NUL"},
		{"control char in name", api.CreateRequest{Dir: r.proj, Name: "a\x01b", Shell: true}, "control"},
		{"newline in name", api.CreateRequest{Dir: r.proj, Name: "a\nb", Shell: true}, "control"},
		{"escape in name", api.CreateRequest{Dir: r.proj, Name: "a\x1b[31mred", Shell: true}, "control"},
		{"DEL in name", api.CreateRequest{Dir: r.proj, Name: "a\x7f", Shell: true}, "control"},
		{"invalid UTF-8 name", api.CreateRequest{Dir: r.proj, Name: "a\xffb", Shell: true}, "control"},
		{"C1 CSI in name", api.CreateRequest{Dir: r.proj, Name: "a\u009b31mred", Shell: true}, "control"},
		{"C1 OSC in name", api.CreateRequest{Dir: r.proj, Name: "a\u009d52;c;eA==\u009c", Shell: true}, "control"},
		{"bidi override in name", api.CreateRequest{Dir: r.proj, Name: "evil\u202egnp.sh", Shell: true}, "bidi"},
		{"bidi isolate in name", api.CreateRequest{Dir: r.proj, Name: "a\u2066b\u2069", Shell: true}, "bidi"},
		{"long name", api.CreateRequest{Dir: r.proj, Name: strings.Repeat("n", 101), Shell: true}, "longer"},
		{"resume id too short", api.CreateRequest{Dir: r.proj, Resume: "abc"}, "not a Claude session id"},
		{"resume id with a path", api.CreateRequest{Dir: r.proj, Resume: "../../etc/passwd"}, "not a Claude session id"},
		{"resume id with a space", api.CreateRequest{Dir: r.proj, Resume: "abcdefgh ijkl"}, "not a Claude session id"},
		{"shell with resume", api.CreateRequest{Dir: r.proj, Shell: true, Resume: "0b0e1d2c-aaaa-bbbb-cccc-0123456789ab"}, "shell"},
		{"shell with claude args", api.CreateRequest{Dir: r.proj, Shell: true, Args: []string{"--model", "x"}}, "shell"},
		{"NUL in claude args", api.CreateRequest{Dir: r.proj, Args: []string{"a\x00b"}}, "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.a.Create(ctxT(t), tt.req)
			if !errors.Is(err, api.ErrBadRequest) {
				t.Fatalf("Create(%#v) = %v, want a bad_request error", tt.req, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
	if list, _ := r.a.Sessions(ctxT(t)); len(list) != 0 {
		t.Errorf("refused creates left sessions: %+v", list)
	}
	if recs, err := r.st.Sessions(ctxT(t)); err != nil || len(recs) != 0 {
		t.Errorf("refused creates left database rows: %+v %v", recs, err)
	}
	if up, _ := r.a.Tmux().Running(ctxT(t)); up {
		if list, err := r.a.Tmux().ListSessions(ctxT(t)); err == nil && len(list) != 0 {
			t.Errorf("refused creates left tmux sessions: %+v", list)
		}
	}
}

func TestCreateClaudeMissing(t *testing.T) {
	t.Parallel()
	r := newRig(t) // ClaudeBin is /nonexistent/claude
	_, err := r.a.Create(ctxT(t), api.CreateRequest{Dir: r.proj})
	if !errors.Is(err, api.ErrUnavailable) {
		t.Fatalf("Create without claude = %v, want unavailable", err)
	}
	if !strings.Contains(err.Error(), "npm install") {
		t.Errorf("error %q does not say how to install Claude Code", err)
	}
}

func TestCreateBadSize(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	for _, size := range [][2]int{{-1, 24}, {80, -5}, {20000, 24}} {
		_, err := r.a.Create(ctxT(t), api.CreateRequest{Dir: r.proj, Shell: true, Cols: size[0], Rows: size[1]})
		if !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("Create with size %v = %v, want bad_request", size, err)
		}
		if recs, _ := r.st.Sessions(ctxT(t)); len(recs) != 0 {
			t.Errorf("size %v: a refused create left a database row", size)
		}
	}
}

func TestCreateShell(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	w := r.watch()
	s, err := r.a.Create(ctxT(t), api.CreateRequest{Dir: r.proj, Shell: true, Cols: 90, Rows: 30})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID == "" || s.Kind != api.KindShell || s.Status != api.StatusIdle || s.Dir != r.proj || s.Name != "proj" {
		t.Errorf("created session = %+v", s)
	}
	if s.CreatedAt.IsZero() || s.UpdatedAt.IsZero() || s.ClaudeSessionID != "" {
		t.Errorf("created session times or claude id: %+v", s)
	}
	ev := w.waitFor(5*time.Second, "the created session", func(ev api.Event) bool { return ev.Type == api.EventSession })
	if ev.Session.ID != s.ID || ev.Prev != "" || ev.Notify {
		t.Errorf("creation event = %+v (prev %q notify %v)", ev.Session, ev.Prev, ev.Notify)
	}
	if ok, err := r.a.Tmux().HasSession(ctxT(t), s.ID); err != nil || !ok {
		t.Errorf("tmux has no session %s: %v", s.ID, err)
	}
	if got, err := r.a.Session(ctxT(t), api.SessionRef{ID: s.ID}); err != nil || got.ID != s.ID {
		t.Errorf("Session(%s) = %+v, %v", s.ID, got, err)
	}
	recs, err := r.st.Sessions(ctxT(t))
	if err != nil || len(recs) != 1 || recs[0].ID != s.ID || recs[0].Kind != "shell" || recs[0].Dir != r.proj {
		t.Errorf("database rows = %+v, %v", recs, err)
	}
	p, err := r.a.Tmux().PaneInfo(ctxT(t), s.ID)
	if err != nil || p.Width != 90 || p.Height != 30 {
		t.Errorf("pane = %+v, %v; want 90x30", p, err)
	}
	r.waitScreen(s.ID, "$")
}

func TestCreateResumeIDLooksLikeAnOption(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	for _, id := range []string{"--dangerously-skip-permissions", "-abcdefgh"} {
		_, err := r.a.Create(ctxT(t), api.CreateRequest{Dir: r.proj, Resume: id})
		if !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("Create(resume %q) = %v, want bad_request", id, err)
		}
	}
}

func TestCreateTildeDir(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	for _, dir := range []string{"~", "~/"} {
		s, err := r.a.Create(ctxT(t), api.CreateRequest{Dir: dir, Shell: true})
		if err != nil {
			t.Fatalf("Create(dir %q): %v", dir, err)
		}
		if s.Dir != r.home {
			t.Errorf("Create(dir %q).Dir = %q, want the home %q", dir, s.Dir, r.home)
		}
	}
}

func TestCreateUniqueNames(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	var got []string
	var first api.Session
	for i := range 3 {
		s := r.shell("")
		if i == 0 {
			first = s
		}
		got = append(got, s.Name)
	}
	if strings.Join(got, ",") != "proj,proj-2,proj-3" {
		t.Errorf("names = %v, want proj, proj-2, proj-3", got)
	}
	if s := r.shell("  spaced  "); s.Name != "spaced" {
		t.Errorf("name %q, want it trimmed to spaced", s.Name)
	}
	if s := r.shell("proj-2"); s.Name != "proj-2-2" {
		t.Errorf("explicit taken name: got %q, want proj-2-2", s.Name)
	}
	if err := r.a.Kill(ctxT(t), api.SessionRef{ID: first.ID}); err != nil {
		t.Fatal(err)
	}
	if s := r.shell(""); s.Name != "proj" {
		t.Errorf("after killing proj, a new session is named %q, want proj again", s.Name)
	}
	list, _ := r.a.Sessions(ctxT(t))
	for i := 1; i < len(list); i++ {
		if list[i].CreatedAt.Before(list[i-1].CreatedAt) {
			t.Errorf("Sessions not in creation order: %v before %v", list[i-1].Name, list[i].Name)
		}
	}
}

func TestCreateConcurrentNamesUnique(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	const n = 4
	var wg sync.WaitGroup
	names := make([]string, n)
	for i := range n {
		wg.Go(func() {
			s, err := r.a.Create(ctxT(t), api.CreateRequest{Dir: r.proj, Name: "dup", Shell: true})
			if err != nil {
				t.Error(err)
				return
			}
			names[i] = s.Name
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
		}
		seen[n] = true
	}
}

func TestKill(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.shell("victim")
	other := r.shell("bystander")
	w := r.watch()
	if err := r.a.Kill(ctxT(t), api.SessionRef{ID: s.ID}); err != nil {
		t.Fatal(err)
	}
	w.removed(s.ID)
	if ok, err := r.a.Tmux().HasSession(ctxT(t), s.ID); err != nil || ok {
		t.Errorf("tmux still has %s (%v)", s.ID, err)
	}
	if _, err := r.a.Session(ctxT(t), api.SessionRef{ID: s.ID}); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("Session after Kill: %v, want not found", err)
	}
	if _, ok := r.a.Bus().Session(s.ID); ok {
		t.Error("the bus still has the killed session")
	}
	recs, _ := r.st.Sessions(ctxT(t))
	if len(recs) != 1 || recs[0].ID != other.ID {
		t.Errorf("database after Kill: %+v, want only %s", recs, other.ID)
	}
	if err := r.a.Kill(ctxT(t), api.SessionRef{ID: s.ID}); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("second Kill: %v, want not found", err)
	}
	for _, bad := range []string{"", "NOPE", "../x", strings.Repeat("a", 65), "a b"} {
		if err := r.a.Kill(ctxT(t), api.SessionRef{ID: bad}); !errors.Is(err, api.ErrNotFound) {
			t.Errorf("Kill(%q): %v, want not found", bad, err)
		}
	}
	if ok, _ := r.a.Tmux().HasSession(ctxT(t), other.ID); !ok {
		t.Error("Kill took the other session's tmux session too")
	}
}

func TestRenamePersists(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.shell("before")
	w := r.watch()
	got, err := r.a.Rename(ctxT(t), api.RenameRequest{SessionRef: api.SessionRef{ID: s.ID}, Name: "  after  "})
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "after" {
		t.Errorf("Rename returned name %q", got.Name)
	}
	ev := w.waitFor(5*time.Second, "the rename event", func(ev api.Event) bool { return ev.Type == api.EventSession })
	if ev.Session.Name != "after" || ev.Prev != api.StatusIdle || ev.Notify {
		t.Errorf("rename event: %+v prev %q", ev.Session, ev.Prev)
	}
	for _, bad := range []string{"", "   ", "a\tb", strings.Repeat("x", 101), "a\u009bb", "a\u202eb", "\u200fx"} {
		if _, err := r.a.Rename(ctxT(t), api.RenameRequest{SessionRef: api.SessionRef{ID: s.ID}, Name: bad}); !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("Rename(%q): %v, want bad request", bad, err)
		}
	}
	if _, err := r.a.Rename(ctxT(t), api.RenameRequest{SessionRef: api.SessionRef{ID: "nosuchsession"}, Name: "x"}); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("Rename of an unknown session: %v, want not found", err)
	}

	r.restart()
	back, err := r.a.Session(ctxT(t), api.SessionRef{ID: s.ID})
	if err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if back.Name != "after" {
		t.Errorf("after restart the session is named %q, want after", back.Name)
	}
}

func TestNewNeedsDataDirAndStore(t *testing.T) {
	if _, err := agent.New(agent.Config{}); err == nil {
		t.Error("New without a data directory succeeded")
	}
	if _, err := agent.New(agent.Config{DataDir: t.TempDir()}); err == nil {
		t.Error("New without a store succeeded")
	}
}

func TestCreateDefaultNameFromHostileDir(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	for _, c := range []struct{ base, name string }{
		{"evil\x1b]0;pwned\x07", "evil ]0;pwned"},
		{"two\nlines", "two lines"},
		{"c1\u009b31m\u009d0;t\u009c", "c1 31m 0;t"},
		{"bidi\u202egnp.sh", "bidi gnp.sh"},
		{"\u2066iso\u2069\u200e", "iso"},
	} {
		dir := filepath.Join(r.proj, c.base)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		s, err := r.a.Create(ctxT(t), api.CreateRequest{Dir: dir, Shell: true})
		if err != nil {
			t.Errorf("create in %q: %v", dir, err)
			continue
		}
		if s.Name != c.name {
			t.Errorf("session in %q is named %q, want %q", dir, s.Name, c.name)
		}
	}
}

func TestUniqueNameRespectsMaxLength(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	long := strings.Repeat("n", 100)
	r.shell(long)
	s := r.shell(long)
	if len(s.Name) > 100 {
		t.Errorf("second session's name is %d bytes", len(s.Name))
	}
}
