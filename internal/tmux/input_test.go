package tmux

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// Text reaches the program byte for byte, however hostile.
func TestSendTextExact(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	p, out := rawCat(t, s, "raw")
	tricky := "-n --help; ls \\; foo;" + "\n" + "#{pid} #S $HOME `id` 'q' \"dq\" -- -t" +
		" ünïcødé ✓ 日本語 🙂\t\x1b[31m red" + "\x00nul\x00" + "\xff\xfe bad utf8 " + "crlf\r\n" + "cr\r" + "end;"
	want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(tricky)
	if err := s.SendText(t.Context(), p.ID, tricky); err != nil {
		t.Fatal(err)
	}
	if got := waitFile(t, out, len(want)); got != want {
		t.Errorf("pane got %q\nwant %q", got, want)
	}
}

// Long text goes in pieces (tmux refuses a command over ~16 KiB), without
// splitting a character, in order.
func TestSendTextLong(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	_, out := rawCat(t, s, "long")
	var b strings.Builder
	for i := 0; b.Len() < 100<<10; i++ {
		b.WriteString("line ")
		b.WriteString(itoa(i))
		b.WriteString(" ✓日本 -x;\n")
	}
	text := b.String()
	if err := s.SendText(t.Context(), "long", text); err != nil {
		t.Fatal(err)
	}
	if got := waitFile(t, out, len(text)); got != text {
		t.Errorf("got %d bytes, want %d; first difference at %d", len(got), len(text), firstDiff(got, text))
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestChunks(t *testing.T) {
	s := strings.Repeat("a✓", 3000) + "\xe2\x9c" // ends in a cut character
	parts := chunks(s, 100)
	if strings.Join(parts, "") != s {
		t.Fatal("chunks lose bytes")
	}
	for i, p := range parts {
		if len(p) > 100 || len(p) < 97 && i < len(parts)-1 {
			t.Errorf("part %d is %d bytes", i, len(p))
		}
		if i < len(parts)-1 && !strings.HasSuffix(p, "a") && !strings.HasSuffix(p, "✓") {
			t.Errorf("part %d ends inside a character: %q", i, p[len(p)-3:])
		}
	}
	if chunks("", 10) != nil {
		t.Error("empty text gives pieces")
	}
	for _, b := range batches([][]string{{strings.Repeat("x", 5000)}, {strings.Repeat("y", 5000)}, {strings.Repeat("z", 5000)}}, callBudget) {
		size := 0
		for _, c := range b {
			size += len(strings.Join(c, " "))
		}
		if size > callBudget {
			t.Errorf("batch of %d bytes", size)
		}
	}
}

// Typed into a cooked-mode cat, text shows on screen and Enter submits.
func TestSendTextToCat(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	newSession(t, s, NewSessionOptions{Name: "cat", Argv: []string{"cat"}, Cols: 80, Rows: 10})
	const text = "-x hello; #{pid} ✓"
	if err := s.SendText(t.Context(), "cat", text); err != nil {
		t.Fatal(err)
	}
	if err := s.SendKeys(t.Context(), "cat", "Enter"); err != nil {
		t.Fatal(err)
	}
	// Once echoed by the terminal, once printed by cat.
	waitFor(t, 20*time.Second, func() (bool, string) {
		screen, err := s.Capture(t.Context(), "cat", CaptureOptions{})
		return err == nil && strings.Count(screen, text+"\n") == 2, screen
	})
}

func TestSendKeys(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	_, out := rawCat(t, s, "keys")
	keys := []string{"y", "1", "/", ";", "-", "Enter", "Tab", "BSpace", "Escape", "C-c", "C-d", "Space", "Up", "F1", "M-x", "C-@"}
	want := "y1/;-\r\t\x7f\x1b\x03\x04 \x1b[A\x1bOP\x1bx\x00"
	if err := s.SendKeys(t.Context(), "keys", keys...); err != nil {
		t.Fatal(err)
	}
	if got := waitFile(t, out, len(want)); got != want {
		t.Errorf("keys arrived as %q, want %q", got, want)
	}
	for _, bad := range []string{"", "-t", "Enter;", "foo", "Enter Enter", "#{pid}", "C-", "\n", "ab", "F13", "enter", "é", "-X", "--"} {
		if err := s.SendKeys(t.Context(), "keys", "a", bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("SendKeys(%q) = %v, want ErrInvalid", bad, err)
		}
	}
	if err := s.SendKeys(t.Context(), "keys"); err != nil {
		t.Errorf("no keys: %v", err)
	}
	// Nothing of the refused calls was typed.
	if got, _ := os.ReadFile(out); string(got) != want {
		t.Errorf("after refused keys the pane got %q", got)
	}
}

// Input to a pane scrolled back in copy mode goes to the program, not to
// copy mode's key bindings.
func TestSendLeavesCopyMode(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	_, out := rawCat(t, s, "mode")
	if _, err := s.run(t.Context(), "copy-mode", "-t", "=mode:"); err != nil {
		t.Fatal(err)
	}
	if p, err := s.PaneInfo(t.Context(), "mode"); err != nil || !p.InMode {
		t.Fatalf("not in copy mode: %+v, %v", p, err)
	}
	if err := s.SendText(t.Context(), "mode", "q"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.run(t.Context(), "copy-mode", "-t", "=mode:"); err != nil {
		t.Fatal(err)
	}
	if err := s.SendKeys(t.Context(), "mode", "k"); err != nil {
		t.Fatal(err)
	}
	if got := waitFile(t, out, 2); got != "qk" {
		t.Errorf("pane got %q", got)
	}
}

func TestCapture(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	ctx := t.Context()
	newSession(t, s, NewSessionOptions{
		Name: "cap", Cols: 40, Rows: 10,
		Argv: []string{"sh", "-c", `seq 1 300; printf '\033[31mRED\033[0m plain\n'; printf '%0100d\n' 0; echo DONE; exec sleep 1000`},
	})
	var screen string
	waitFor(t, 20*time.Second, func() (bool, string) {
		var err error
		screen, err = s.Capture(ctx, "cap", CaptureOptions{})
		return err == nil && strings.Contains(screen, "DONE"), screen
	})
	if lines := strings.Split(strings.TrimSuffix(screen, "\n"), "\n"); len(lines) != 10 {
		t.Errorf("visible capture has %d lines", len(lines))
	}
	if strings.Contains(screen, "\x1b") || !strings.Contains(screen, "RED plain") {
		t.Errorf("plain capture: %q", screen)
	}
	if !strings.Contains(screen, "\n"+strings.Repeat("0", 40)+"\n") {
		t.Errorf("want the long line wrapped at 40: %q", screen)
	}
	if strings.HasPrefix(screen, "1\n") {
		t.Error("visible screen starts with the first line")
	}

	hist, err := s.Capture(ctx, "cap", CaptureOptions{History: 1000})
	if err != nil || !strings.HasPrefix(hist, "1\n2\n3\n") || !strings.Contains(hist, "\n300\n") || !strings.HasSuffix(strings.TrimRight(hist, "\n"), "DONE") {
		t.Errorf("capture with history: %.80q..., %v", hist, err)
	}
	some, err := s.Capture(ctx, "cap", CaptureOptions{History: 5})
	if n := strings.Count(some, "\n"); err != nil || n != 15 {
		t.Errorf("History 5 gives %d lines, %v", n, err)
	}

	esc, err := s.Capture(ctx, "cap", CaptureOptions{Escapes: true})
	if err != nil || !strings.Contains(esc, "\x1b[31mRED") {
		t.Errorf("capture with escapes: %q, %v", esc, err)
	}
	joined, err := s.Capture(ctx, "cap", CaptureOptions{Join: true})
	if err != nil || !strings.Contains(joined, "\n"+strings.Repeat("0", 100)+"\n") {
		t.Errorf("joined capture: %q, %v", joined, err)
	}
	if _, err := s.Capture(ctx, "cap", CaptureOptions{History: -1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative history: %v", err)
	}
}

func TestTitleAndCursor(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	newSession(t, s, NewSessionOptions{Name: "t", Argv: []string{"sh", "-c", `printf '\033]2;my title\033\\abc'; exec sleep 1000`}})
	waitFor(t, 20*time.Second, func() (bool, string) {
		p, err := s.PaneInfo(t.Context(), "t")
		return err == nil && p.Title == "my title" && p.CursorX == 3 && p.CursorY == 0, p.Title
	})
}

func TestResizeAndAttach(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	ctx := t.Context()
	newSession(t, s, NewSessionOptions{Name: "r", Argv: []string{"sleep", "1000"}, Cols: 80, Rows: 24})
	if err := s.Resize(ctx, "r", 100, 30); err != nil {
		t.Fatal(err)
	}
	p, err := s.PaneInfo(ctx, "r")
	if err != nil || p.Width != 100 || p.Height != 30 {
		t.Fatalf("after Resize: %+v, %v", p, err)
	}
	for _, bad := range [][2]int{{0, 10}, {10, 0}, {-1, 5}, {20000, 10}} {
		if err := s.Resize(ctx, "r", bad[0], bad[1]); !errors.Is(err, ErrInvalid) {
			t.Errorf("Resize(%v) = %v", bad, err)
		}
	}

	// A real terminal attached through AttachCommand takes over the size.
	argv := s.AttachCommand("r")
	if argv[0] != DefaultBinary || argv[len(argv)-1] != "=r" {
		t.Errorf("AttachCommand = %q", argv)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(s.Env(), "TERM=xterm-256color")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
	if err != nil {
		t.Fatal(err)
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		io.Copy(io.Discard, tty)
	}()
	detached := false
	t.Cleanup(func() {
		if !detached {
			cmd.Process.Kill()
		}
		cmd.Wait()
		tty.Close()
		<-drained
	})
	waitFor(t, 20*time.Second, func() (bool, string) {
		l, err := s.ListSessions(ctx)
		return err == nil && len(l) == 1 && l[0].Attached == 1 && l[0].Width == 120 && l[0].Height == 40, spewSessions(l, err)
	})
	// Resize while attached gives way to the client again.
	if err := s.Resize(ctx, "r", 60, 20); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, func() (bool, string) {
		p, err := s.PaneInfo(ctx, "r")
		return err == nil && p.Width == 120 && p.Height == 40, "size stays pinned"
	})
	if _, err := s.run(ctx, "detach-client", "-s", "=r"); err != nil {
		t.Fatal(err)
	}
	detached = true
	waitFor(t, 20*time.Second, func() (bool, string) {
		l, err := s.ListSessions(ctx)
		return err == nil && len(l) == 1 && l[0].Attached == 0, spewSessions(l, err)
	})
}

func spewSessions(l []SessionInfo, err error) string {
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, si := range l {
		b.WriteString(si.Name + " attached=" + itoa(si.Attached) + " " + itoa(si.Width) + "x" + itoa(si.Height) + "; ")
	}
	return b.String()
}

func BenchmarkSendKeys(b *testing.B) {
	s := newServer(b)
	newSession(b, s, NewSessionOptions{Name: "bench", Argv: []string{"cat"}})
	for b.Loop() {
		if err := s.SendKeys(b.Context(), "bench", "a"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCapture(b *testing.B) {
	s := newServer(b)
	newSession(b, s, NewSessionOptions{Name: "bench", Argv: []string{"sh", "-c", "seq 1 100; exec sleep 1000"}})
	for b.Loop() {
		if _, err := s.Capture(b.Context(), "bench", CaptureOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendCaptureRoundTrip types a word into cat and polls the
// screen until it shows: what answering a prompt and seeing the result costs.
func BenchmarkSendCaptureRoundTrip(b *testing.B) {
	s := newServer(b)
	newSession(b, s, NewSessionOptions{Name: "bench", Argv: []string{"cat"}, Cols: 80, Rows: 5})
	i := 0
	for b.Loop() {
		i++
		word := "w" + itoa(i)
		if err := s.SendText(b.Context(), "bench", word); err != nil {
			b.Fatal(err)
		}
		if err := s.SendKeys(b.Context(), "bench", "Enter"); err != nil {
			b.Fatal(err)
		}
		for {
			screen, err := s.Capture(b.Context(), "bench", CaptureOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if strings.Contains(screen, word+"\n"+word+"\n") {
				break
			}
		}
	}
}

// TestSuspendAlone suspends a real attached client and wakes it with
// SIGCONT, and leaves a client alone while another of another size is
// attached to the same session.
func TestSuspendAlone(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	ctx := t.Context()
	newSession(t, s, NewSessionOptions{Name: "f", Argv: []string{"sleep", "1000"}, Cols: 80, Rows: 24})
	type client struct {
		tty  string
		cmd  *exec.Cmd
		ptmx *os.File
	}
	attach := func(cols, rows int) client {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		pty.Setsize(ptmx, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
		argv := s.AttachCommand("f")
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(s.Env(), "TERM=xterm-256color")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tty.Close()
		drained := make(chan struct{})
		go func() { defer close(drained); io.Copy(io.Discard, ptmx) }()
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); ptmx.Close(); <-drained })
		return client{tty.Name(), cmd, ptmx}
	}
	flags := func(c client) string {
		out, err := s.run(ctx, "list-clients", "-F", "#{client_tty} #{client_width}x#{client_height} #{client_flags}")
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[0] == c.tty {
				return f[1] + " " + f[2]
			}
		}
		return "absent"
	}
	a := attach(80, 24)
	b := attach(100, 30)
	waitFor(t, 20*time.Second, func() (bool, string) {
		fa, fb := flags(a), flags(b)
		return strings.HasPrefix(fa, "80x24 ") && strings.HasPrefix(fb, "100x30 "), fa + " / " + fb
	})
	if err := s.SuspendAlone(ctx, a.tty); !errors.Is(err, ErrOtherSize) {
		t.Fatalf("with a 100x30 client beside an 80x24 one: %v, want ErrOtherSize", err)
	}
	if f := flags(a); strings.Contains(f, "suspended") {
		t.Fatalf("refused, yet suspended: %s", f)
	}
	pty.Setsize(b.ptmx, &pty.Winsize{Cols: 80, Rows: 24})
	b.cmd.Process.Signal(syscall.SIGWINCH)
	waitFor(t, 20*time.Second, func() (bool, string) { f := flags(b); return strings.HasPrefix(f, "80x24 "), f })
	if err := s.SuspendAlone(ctx, a.tty); err != nil {
		t.Fatalf("with clients of one size: %v", err)
	}
	if f := flags(a); !strings.Contains(f, "suspended") {
		t.Fatalf("not suspended: %s", f)
	}
	// SIGCONT makes the client ask to be woken.
	a.cmd.Process.Signal(syscall.SIGCONT)
	waitFor(t, 20*time.Second, func() (bool, string) { f := flags(a); return !strings.Contains(f, "suspended"), f })

	if err := s.SuspendAlone(ctx, "/dev/pts/999999"); err == nil || !strings.Contains(err.Error(), "no client") {
		t.Errorf("a terminal without a client: %v", err)
	}
	if err := s.SuspendAlone(ctx, "pts/1; kill-server"); !errors.Is(err, ErrInvalid) {
		t.Errorf("not a terminal path: %v", err)
	}
}

// TestHistoryMark: the mark stays while nothing scrolls off the screen and
// changes with every line that does, also at the history limit, where tmux
// drops a tenth of the history at once.
func TestHistoryMark(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	ctx := t.Context()
	newSession(t, s, NewSessionOptions{Name: "first", Argv: []string{"sleep", "1000"}})
	if _, err := s.run(ctx, "set-option", "-g", "history-limit", "100"); err != nil {
		t.Fatal(err)
	}
	newSession(t, s, NewSessionOptions{Name: "h", Cols: 40, Rows: 10, Argv: []string{"sh", "-c", "while read n; do seq 1 $n; echo end-$n; done"}})
	mark := func() HistoryMark {
		t.Helper()
		m, err := s.History(ctx, "h")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	run := func(n string) {
		t.Helper()
		if err := s.SendText(ctx, "h", n); err != nil {
			t.Fatal(err)
		}
		if err := s.SendKeys(ctx, "h", "Enter"); err != nil {
			t.Fatal(err)
		}
	}
	m0 := mark()
	if m0.Lines != 0 {
		t.Errorf("a new pane has %d lines of history", m0.Lines)
	}
	run("3") // five lines on a screen of ten: nothing scrolls
	waitFor(t, 10*time.Second, func() (bool, string) {
		scr, _ := s.Capture(ctx, "h", CaptureOptions{})
		return strings.HasPrefix(scr, "3\n1\n2\n3\nend-3\n"), scr
	})
	if m := mark(); m != m0 {
		t.Errorf("nothing scrolled, yet the mark went from %+v to %+v", m0, m)
	}
	run("150")
	waitFor(t, 10*time.Second, func() (bool, string) {
		scr, _ := s.Capture(ctx, "h", CaptureOptions{})
		return strings.Contains(scr, "\nend-150\n"), scr
	})
	prev := mark()
	if prev.Lines < 90 || prev.Lines > 100 {
		t.Errorf("after 150 lines a history of 100 holds %d", prev.Lines)
	}
	// Each run scrolls the same three lines ("1" typed, "1" printed,
	// "end-1"): the mark must change every time, across the drops at the
	// limit.
	dropped := false
	for i := 0; i < 15; i++ {
		run("1")
		var m HistoryMark
		waitFor(t, 10*time.Second, func() (bool, string) {
			m = mark()
			return m != prev, fmt.Sprintf("run %d: the mark stayed %+v", i, m)
		})
		dropped = dropped || m.Lines < prev.Lines
		prev = m
	}
	if !dropped {
		t.Error("the history never reached its limit")
	}
	if _, err := s.History(ctx, "nosuch"); err == nil {
		t.Error("History of a missing session: no error")
	}
}

// Paste arrives as one bracketed paste when the program asked for them
// (mode 2004, as Claude Code does), whole, newlines kept, however long.
func TestPaste(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	dir := t.TempDir()
	out, ready := dir+"/out", dir+"/ready"
	p := newSession(t, s, NewSessionOptions{
		Name: "paste",
		Argv: []string{"/bin/sh", "-c", `stty raw -echo && printf '\033[?2004h' && : > "$1" && exec cat > "$0"`, out, ready},
	})
	waitFile(t, ready, 0)
	var b strings.Builder
	for i := 0; b.Len() < 40<<10; i++ {
		b.WriteString("line " + itoa(i) + " ✓ 1. -x;\n")
	}
	text := b.String()
	if err := s.Paste(t.Context(), p.ID, text); err != nil {
		t.Fatal(err)
	}
	want := "\x1b[200~" + text + "\x1b[201~"
	if got := waitFile(t, out, len(want)); got != want {
		t.Errorf("got %d bytes, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
	// The buffer is gone afterwards.
	if bufs, _ := s.run(t.Context(), "list-buffers", "-F", "#{buffer_name}"); strings.Contains(bufs, "corral-paste") {
		t.Errorf("paste buffer left behind: %q", bufs)
	}
	for _, bad := range []string{"a\x1b[201~b", "nul\x00"} {
		if err := s.Paste(t.Context(), p.ID, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Paste(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}
