package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	s := newServer(t) // NewSession starts the server itself
	ctx := t.Context()
	dir := t.TempDir()
	before := time.Now().Add(-time.Second)
	p := newSession(t, s, NewSessionOptions{Name: "work", Dir: dir, Argv: []string{"sleep", "1000"}, Cols: 90, Rows: 30})
	if !strings.HasPrefix(p.ID, "%") || p.PID <= 0 || p.SessionName != "work" || p.Width != 90 || p.Height != 30 || p.Dead {
		t.Errorf("NewSession pane = %+v", p)
	}
	// The pane process is tmux's fork until it execs.
	waitFor(t, 20*time.Second, func() (bool, string) {
		comm, _ := os.ReadFile("/proc/" + itoa(p.PID) + "/comm")
		return strings.TrimSpace(string(comm)) == "sleep", "pane process runs " + string(comm)
	})
	if ok, err := s.HasSession(ctx, "work"); !ok || err != nil {
		t.Errorf("HasSession = %v, %v", ok, err)
	}
	var si SessionInfo
	waitFor(t, 20*time.Second, func() (bool, string) {
		list, err := s.ListSessions(ctx)
		if err != nil || len(list) != 1 {
			return false, spewSessions(list, err)
		}
		si = list[0]
		return si.Pane.Command == "sleep" && si.Pane.Path == dir, si.Pane.Command + " in " + si.Pane.Path
	})
	if si.Name != "work" || si.ID != p.SessionID || si.Attached != 0 || si.Width != 90 || si.Height != 30 ||
		si.Created.Before(before) || si.Created.After(time.Now()) {
		t.Errorf("SessionInfo = %+v", si)
	}
	if si.Pane.ID != p.ID || si.Pane.PID != p.PID || si.Pane.Command != "sleep" || si.Pane.Path != dir || !si.Pane.Active {
		t.Errorf("SessionInfo.Pane = %+v, want pane %+v in %s", si.Pane, p, dir)
	}
	for _, target := range []string{"work", p.ID} {
		q, err := s.PaneInfo(ctx, target)
		if err != nil || q.ID != p.ID || q.PID != p.PID || q.Command != "sleep" || q.Path != dir {
			t.Errorf("PaneInfo(%q) = %+v, %v", target, q, err)
		}
	}
	if err := s.KillSession(ctx, "work"); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.HasSession(ctx, "work"); ok || err != nil {
		t.Errorf("HasSession after kill = %v, %v", ok, err)
	}
	if list, err := s.ListSessions(ctx); err != nil || len(list) != 0 {
		t.Errorf("ListSessions after kill = %+v, %v", list, err)
	}
	if _, err := os.Stat("/proc/" + itoa(p.PID)); err == nil {
		waitFor(t, 20*time.Second, func() (bool, string) {
			st, err := os.ReadFile("/proc/" + itoa(p.PID) + "/stat")
			return err != nil || strings.Contains(string(st), ") Z "), "pane process still alive"
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestDefaultSize(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	p := newSession(t, s, NewSessionOptions{Name: "d", Argv: []string{"sleep", "1000"}})
	if p.Width != DefaultCols || p.Height != DefaultRows {
		t.Errorf("size %dx%d", p.Width, p.Height)
	}
}

// tmux prefix-matches a bare session name; every call here must not.
func TestExactTargets(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	ctx := t.Context()
	abc := newSession(t, s, NewSessionOptions{Name: "abc", Argv: []string{"cat"}})

	if ok, err := s.HasSession(ctx, "ab"); ok || err != nil {
		t.Errorf("HasSession(ab) = %v, %v", ok, err)
	}
	if _, err := s.PaneInfo(ctx, "ab"); !errors.Is(err, ErrNoSession) {
		t.Errorf("PaneInfo(ab) = %v", err)
	}
	if err := s.SendText(ctx, "ab", "x"); !errors.Is(err, ErrNoSession) {
		t.Errorf("SendText(ab) = %v", err)
	}
	if err := s.SendKeys(ctx, "ab", "Enter"); !errors.Is(err, ErrNoSession) {
		t.Errorf("SendKeys(ab) = %v", err)
	}
	if _, err := s.Capture(ctx, "ab", CaptureOptions{}); !errors.Is(err, ErrNoSession) {
		t.Errorf("Capture(ab) = %v", err)
	}
	if err := s.Resize(ctx, "ab", 50, 20); !errors.Is(err, ErrNoSession) {
		t.Errorf("Resize(ab) = %v", err)
	}
	if err := s.KillSession(ctx, "ab"); !errors.Is(err, ErrNoSession) {
		t.Errorf("KillSession(ab) = %v", err)
	}
	if q, err := s.PaneInfo(ctx, "abc"); err != nil || q.Width != DefaultCols {
		t.Fatalf("abc was touched: %+v, %v", q, err)
	}

	ab := newSession(t, s, NewSessionOptions{Name: "ab", Argv: []string{"cat"}})
	if ab.ID == abc.ID {
		t.Fatal("same pane")
	}
	if q, err := s.PaneInfo(ctx, "ab"); err != nil || q.ID != ab.ID {
		t.Errorf("PaneInfo(ab) = %+v, %v; want %s", q, err, ab.ID)
	}
	if err := s.KillSession(ctx, "ab"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.HasSession(ctx, "abc"); !ok {
		t.Error("killing ab killed abc")
	}
	// And a prefix of the pane id form is no pane either.
	if _, err := s.PaneInfo(ctx, "%999"); !errors.Is(err, ErrNoSession) || !strings.Contains(err.Error(), "can't find pane") {
		t.Errorf("PaneInfo(%%999) = %v", err)
	}
}

func TestMissingSessionError(t *testing.T) {
	t.Parallel()
	s := startedServer(t)
	// With no session at all, tmux 3.3a says "no current target".
	if _, err := s.PaneInfo(t.Context(), "nosuch"); !errors.Is(err, ErrNoSession) {
		t.Errorf("PaneInfo on an empty server = %v", err)
	}
	newSession(t, s, NewSessionOptions{Name: "other", Argv: []string{"sleep", "1000"}})
	_, err := s.PaneInfo(t.Context(), "nosuch")
	t.Log(err)
	var te *Error
	if !errors.As(err, &te) || !errors.Is(err, ErrNoSession) || errors.Is(err, ErrNoServer) {
		t.Fatalf("err = %#v", err)
	}
	if !strings.Contains(err.Error(), "can't find session: nosuch") || !strings.Contains(err.Error(), "=nosuch:") {
		t.Errorf("Error() = %q, want tmux's message and the target", err)
	}
	// Typed text is not dumped into error messages.
	err = s.SendText(t.Context(), "nosuch", strings.Repeat("y", 5000))
	if !errors.Is(err, ErrNoSession) || len(err.Error()) > 500 {
		t.Errorf("SendText error (%d bytes): %.200s", len(err.Error()), err)
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	ctx := t.Context()
	odd := []string{"sp ace", "semi;", ";", "#{pid}", "#S", "-dash", "ünï ✓ 日本", `q'"`, "a=b", "~t", "x{y}", "trail ", "nb\u00a0sp"}
	for _, name := range odd {
		p := newSession(t, s, NewSessionOptions{Name: name, Argv: []string{"sleep", "1000"}})
		if p.SessionName != name {
			t.Errorf("created %q as %q", name, p.SessionName)
		}
	}
	list, err := s.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, si := range list {
		names = append(names, si.Name)
	}
	slices.Sort(names)
	want := slices.Sorted(slices.Values(odd))
	if !slices.Equal(names, want) {
		t.Errorf("listed %q, want %q", names, want)
	}
	for _, name := range odd {
		if ok, err := s.HasSession(ctx, name); !ok || err != nil {
			t.Errorf("HasSession(%q) = %v, %v", name, ok, err)
		}
		if p, err := s.PaneInfo(ctx, name); err != nil || p.SessionName != name {
			t.Errorf("PaneInfo(%q) = %+v, %v", name, p, err)
		}
		if err := s.KillSession(ctx, name); err != nil {
			t.Errorf("KillSession(%q) = %v", name, err)
		}
	}
	if list, _ := s.ListSessions(ctx); len(list) != 0 {
		t.Errorf("left over: %+v", list)
	}

	for _, bad := range []string{"", "a.b", "a:b", `a\b`, "$x", "@x", "%x", "%1", "=x", "a\nb", "a\tb", "\xff", "a\x7fb", "a$b", "a\u2028b", "a\u0085b"} {
		if _, err := s.NewSession(ctx, NewSessionOptions{Name: bad, Argv: []string{"true"}}); !errors.Is(err, ErrInvalid) {
			t.Errorf("NewSession(%q) = %v, want ErrInvalid", bad, err)
		}
		if bad == "%1" {
			continue // a valid pane id as a pane target
		}
		if _, err := s.HasSession(ctx, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("HasSession(%q) = %v, want ErrInvalid", bad, err)
		}
		if err := s.SendText(ctx, bad, "x"); !errors.Is(err, ErrInvalid) {
			t.Errorf("SendText(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestEnvReachesPane(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	out := filepath.Join(t.TempDir(), "env")
	foo := `a b'c"$HOME;#{pid}\ ✓;`
	newSession(t, s, NewSessionOptions{
		Name: "env",
		Env:  []string{"FOO=" + foo, "BAR=x;", "EMPTY="},
		Argv: []string{"sh", "-c", `printf '%s|%s|%s|%s|%s' "$FOO" "$BAR" "${EMPTY-unset}" "$TMUX_TMPDIR" "$TMUX" > "$0.tmp" && mv "$0.tmp" "$0"; exec sleep 1000`, out},
	})
	got := strings.Split(waitFile(t, out, 1), "|")
	if len(got) != 5 || got[0] != foo || got[1] != "x;" || got[2] != "" {
		t.Fatalf("pane env = %q", got)
	}
	if got[3] != filepath.Dir(s.SocketPath()) {
		t.Errorf("server env TMUX_TMPDIR = %q, want %q", got[3], filepath.Dir(s.SocketPath()))
	}
	if !strings.HasPrefix(got[4], s.SocketPath()+",") {
		t.Errorf("TMUX in pane = %q, want our socket", got[4])
	}
	for _, bad := range []string{"NOEQUALS", "=v", "A=\x00"} {
		if _, err := s.NewSession(t.Context(), NewSessionOptions{Name: "bad", Env: []string{bad}}); !errors.Is(err, ErrInvalid) {
			t.Errorf("Env %q: %v", bad, err)
		}
	}
}

// Each argv element reaches the program intact: tmux's own parser would
// eat a trailing ';', and a shell would split or expand the rest.
func TestArgvExact(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	out := filepath.Join(t.TempDir(), "args")
	args := []string{"x;", "-e", `\;`, ";", "#{pid}", "a  b", "$HOME", "'", `"`, "*", "ü"}
	argv := append([]string{"/bin/sh", "-c", `printf '%s\n' "$@" > "$0.tmp" && mv "$0.tmp" "$0"; exec sleep 1000`, out}, args...)
	newSession(t, s, NewSessionOptions{Name: "argv", Argv: argv})
	got := strings.Split(strings.TrimSuffix(waitFile(t, out, 1), "\n"), "\n")
	if !slices.Equal(got, args) {
		t.Errorf("argv arrived as %q, want %q", got, args)
	}
}

// A single-element argv is a program path, not a shell command line.
func TestSingleArgvNotShellSplit(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	dir := filepath.Join(t.TempDir(), `it's a "dir" $x;`)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "run me; now")
	script := "#!/bin/sh\necho ran:\"$0\" > \"$(dirname \"$0\")/marker\"\nexec sleep 1000\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p := newSession(t, s, NewSessionOptions{Name: "single", Argv: []string{prog}})
	if got := waitFile(t, filepath.Join(dir, "marker"), 1); got != "ran:"+prog+"\n" {
		t.Errorf("marker = %q", got)
	}
	// The wrapper shell exec'd the program: the pane process is it.
	waitFor(t, 20*time.Second, func() (bool, string) {
		q, err := s.PaneInfo(t.Context(), p.ID)
		return err == nil && q.Command == "sleep" && q.PID == p.PID, q.Command
	})
}

func TestStartDir(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	dir := filepath.Join(t.TempDir(), "d #{pid} #S ;")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "pwd")
	p := newSession(t, s, NewSessionOptions{Name: "dir", Dir: dir, Argv: []string{"sh", "-c", `pwd > "$0.tmp" && mv "$0.tmp" "$0"; exec sleep 1000`, out}})
	if got := waitFile(t, out, 1); got != dir+"\n" {
		t.Errorf("pwd = %q, want %q", got, dir)
	}
	if q, err := s.PaneInfo(t.Context(), p.ID); err != nil || q.Path != dir {
		t.Errorf("pane path = %q, %v", q.Path, err)
	}
	for _, bad := range []string{filepath.Join(dir, "missing"), out} {
		if _, err := s.NewSession(t.Context(), NewSessionOptions{Name: "bad", Dir: bad}); err == nil {
			t.Errorf("NewSession in %s succeeded", bad)
		}
	}
	if ok, _ := s.HasSession(t.Context(), "bad"); ok {
		t.Error("session created anyway")
	}
}

func TestRemainOnExit(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	ctx := t.Context()
	newSession(t, s, NewSessionOptions{Name: "stays", Argv: []string{"sh", "-c", "exit 3"}, RemainOnExit: true})
	var p PaneInfo
	waitFor(t, 20*time.Second, func() (bool, string) {
		var err error
		p, err = s.PaneInfo(ctx, "stays")
		return err == nil && p.Dead, fmt.Sprintf("pane not dead: %+v, %v", p, err)
	})
	if p.DeadStatus == -1 {
		// Seen under heavy load: tmux 3.3a missed the SIGCHLD of the
		// instant command, which stays a zombie with its status unread
		// until another SIGCHLD makes the server reap its children.
		srv, err := s.ServerPID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("tmux has not collected the exit status; sending its server SIGCHLD")
		syscall.Kill(srv, syscall.SIGCHLD)
		waitFor(t, 20*time.Second, func() (bool, string) {
			var err error
			p, err = s.PaneInfo(ctx, "stays")
			return err == nil && p.DeadStatus != -1, fmt.Sprintf("no exit status: %+v, %v", p, err)
		})
	}
	if p.DeadStatus != 3 {
		t.Errorf("dead pane's status %d, want 3", p.DeadStatus)
	}
	list, err := s.ListSessions(ctx)
	if err != nil || len(list) != 1 || !list[0].Pane.Dead {
		t.Errorf("ListSessions = %+v, %v", list, err)
	}

	newSession(t, s, NewSessionOptions{Name: "goes", Argv: []string{"sh", "-c", "exit 0"}})
	waitFor(t, 20*time.Second, func() (bool, string) {
		ok, err := s.HasSession(ctx, "goes")
		return !ok && err == nil, "session without remain-on-exit still there"
	})
}

func TestRecords(t *testing.T) {
	out := "a\x1fb\x1e\nc\x1fd\x1e\n"
	recs, err := records(out, 2)
	if err != nil || len(recs) != 2 || recs[1][0] != "c" || recs[1][1] != "d" {
		t.Errorf("records = %q, %v", recs, err)
	}
	// A newline inside a field (a directory name may hold one) is kept.
	recs, err = records("x\ny\x1fz\x1e\n", 2)
	if err != nil || len(recs) != 1 || recs[0][0] != "x\ny" {
		t.Errorf("records = %q, %v", recs, err)
	}
	if _, err := records("a\x1fb\x1fc\x1e\n", 2); err == nil {
		t.Error("wrong field count accepted")
	}
}

func FuzzParsePanes(f *testing.F) {
	f.Add("%1\x1f42\x1f$1\x1fname\x1fsleep\x1f/tmp\x1f80\x1f24\x1f0\x1f0\x1f0\x1f\x1ftitle\x1f0\x1f1\x1f1\x1e\n")
	f.Add("\x1e\x1e\n\x1f")
	f.Fuzz(func(t *testing.T, out string) {
		panes, err := parsePanes(out)
		if err == nil && len(panes) > strings.Count(out, recordSep) {
			t.Fatalf("%d panes from %d records", len(panes), strings.Count(out, recordSep))
		}
	})
}

// A window's change of size signals whoever waits, and one made while
// nobody waited is kept for the next wait; a wait that nothing ends returns
// after its limit.
func TestWaitWindowResized(t *testing.T) {
	s := startedServer(t)
	newSession(t, s, NewSessionOptions{Name: "w", Argv: []string{"sleep", "300"}, Cols: 80, Rows: 24})
	ctx := t.Context()
	if err := s.HookWindowResized(ctx); err != nil {
		t.Fatal(err)
	}
	// The hook's own signal, then the limit.
	for range 2 {
		if err := s.WaitWindowResized(ctx, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	// Whether the resize comes before the wait or during it, the wait sees
	// it well before its limit.
	done := make(chan error, 1)
	go func() { done <- s.WaitWindowResized(ctx, time.Hour) }()
	if err := s.Resize(ctx, "w", 100, 30); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a resize did not end the wait")
	}
	// Nobody waits now: the next resize is kept for the next wait.
	if err := s.Resize(ctx, "w", 90, 30); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.WaitWindowResized(wctx, time.Hour); err != nil {
		t.Fatalf("the resize made while nobody waited was lost: %v", err)
	}
}
