package term

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/proc"
	"github.com/corral-dev/corral/internal/testkit/tmuxtest"
)

func readUntil(t *testing.T, s *Stream, off uint64, want string, timeout time.Duration) (string, uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var all bytes.Buffer
	for !strings.Contains(all.String(), want) {
		b, err := s.Read(ctx, off, 4096)
		if err != nil {
			t.Fatalf("read at %d: %v (have %q)", off, err, all.String())
		}
		all.Write(b)
		off += uint64(len(b))
	}
	return all.String(), off
}

func TestEchoAndPrefill(t *testing.T) {
	s, err := Start(Options{Argv: []string{"/bin/sh"}, Env: []string{"PATH=/bin:/usr/bin", "PS1=$ "}, Cols: 80, Rows: 24, Prefill: []byte("history line\r\n")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, off := readUntil(t, s, 0, "history line", 5*time.Second)
	if !strings.HasPrefix(out, "history line") {
		t.Fatalf("prefill does not come first: %q", out)
	}
	if _, err := s.Write([]byte("echo hi-$((6*7))\n")); err != nil {
		t.Fatal(err)
	}
	readUntil(t, s, off, "hi-42", 5*time.Second)
}

func TestResumeFromOffsetAndGap(t *testing.T) {
	s, err := Start(Options{Argv: []string{"/bin/sh", "-c", "for i in $(seq 1 2000); do echo line-$i; done; echo END; sleep 30"}, Env: []string{"PATH=/bin:/usr/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first, off := readUntil(t, s, 0, "line-10\r\n", 5*time.Second)
	// A viewer that lost its connection comes back at its offset: the rest
	// follows with nothing missing and nothing repeated.
	rest, _ := readUntil(t, s, off, "END", 5*time.Second)
	all := first + rest
	for i := 1; i <= 2000; i++ {
		if c := strings.Count(all, fmt.Sprintf("line-%d\r\n", i)); c != 1 {
			t.Fatalf("line-%d appears %d times", i, c)
		}
	}
	// Asking again from 0 still works while the ring holds it (~20 KB).
	again, _ := readUntil(t, s, 0, "END", 5*time.Second)
	if again != all {
		t.Fatal("replay from 0 differs")
	}
	start, end := s.Offsets()
	if start != 0 || end != uint64(len(all)) {
		t.Fatalf("offsets %d..%d, read %d", start, end, len(all))
	}
	if _, err := s.Read(context.Background(), end+1, 10); !errors.Is(err, ErrGap) {
		t.Fatalf("read past the end: %v", err)
	}
}

// TestBackpressure: a viewer that does not read makes the stream stop
// reading the PTY after a window, so memory stays bounded whatever the
// program writes; reading again lets the program go on.
func TestBackpressure(t *testing.T) {
	s, err := Start(Options{Argv: []string{"/bin/sh", "-c", "yes 0123456789abcdef | head -c 20000000; echo; echo DONE"}, Env: []string{"PATH=/bin:/usr/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Wait until the producer has stalled at the window.
	deadline := time.Now().Add(10 * time.Second)
	var last uint64
	for {
		_, end := s.Offsets()
		if end >= Window && end == last {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("producer did not stall: end %d", end)
		}
		last = end
		time.Sleep(50 * time.Millisecond)
	}
	if _, end := s.Offsets(); end > Window+readChunk {
		t.Fatalf("read %d bytes ahead of a viewer that took none (window %d)", end, Window)
	}
	// Reading everything now gets all of it, in order, ending with DONE.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var off uint64
	var tail []byte
	for {
		b, err := s.Read(ctx, off, 64<<10)
		if errors.Is(err, ErrRedraw) {
			// The viewer did lag (it took nothing until now), and a producer
			// starved of CPU can pause for the quiet time: a redraw is then
			// offered, and the bytes are still all there.
			continue
		}
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		off += uint64(len(b))
		tail = append(tail, b...)
		if len(tail) > 64 {
			tail = tail[len(tail)-64:]
		}
		if bytes.Contains(tail, []byte("DONE")) {
			break
		}
	}
	// The PTY turns \n into \r\n: 20 MB of "0123456789abcdef\n" lines.
	if off < 20000000 {
		t.Fatalf("only %d bytes arrived", off)
	}
}

func TestClosedAfterExit(t *testing.T) {
	s, err := Start(Options{Argv: []string{"/bin/sh", "-c", "echo bye"}, Env: []string{"PATH=/bin:/usr/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, off := readUntil(t, s, 0, "bye", 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		b, err := s.Read(ctx, off, 1024)
		if errors.Is(err, ErrClosed) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		off += uint64(len(b))
	}
	if closed, err := s.Closed(); !closed || err != nil {
		t.Fatalf("closed %v err %v", closed, err)
	}
}

func TestRegistryGrace(t *testing.T) {
	r := NewRegistry(time.Minute)
	s, err := Start(Options{Argv: []string{"/bin/sh", "-c", "sleep 30"}, Env: []string{"PATH=/bin:/usr/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	r.Add("sess", s)
	s.AddViewer()
	s.DropViewer()
	now := time.Now()
	r.Sweep(now.Add(30 * time.Second))
	if _, ok := r.Get("sess", s.ID); !ok {
		t.Fatal("swept within the grace period")
	}
	if _, ok := r.Get("other", s.ID); ok {
		t.Fatal("a stream answered for another session")
	}
	r.Sweep(now.Add(2 * time.Minute))
	if _, ok := r.Get("sess", s.ID); ok || r.Count() != 0 {
		t.Fatal("idle stream kept past the grace period")
	}
	if closed, _ := s.Closed(); !closed {
		t.Fatal("swept stream not closed")
	}
}

// TestRedrawAfterSkip: a run of a screen's height of newlines is how tmux
// skips lines it could not flush in time; the viewer is then told to redraw,
// once the output is quiet. Ordinary output is not.
func TestRedrawAfterSkip(t *testing.T) {
	s, err := Start(Options{Argv: []string{"/bin/sh", "-c", "echo small; echo; echo; sleep 1; printf 'x\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n'; echo DONE; sleep 30"},
		Env: []string{"PATH=/bin:/usr/bin"}, Rows: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var off uint64
	var all []byte
	redraws := 0
	for !bytes.Contains(all, []byte("DONE")) || redraws == 0 {
		b, err := s.Read(ctx, off, 64<<10)
		if errors.Is(err, ErrRedraw) {
			redraws++
			if !bytes.Contains(all, []byte("DONE")) {
				t.Fatalf("redraw asked for before the skip (have %q)", all)
			}
			continue
		}
		if err != nil {
			t.Fatalf("read: %v (redraws %d)", err, redraws)
		}
		off += uint64(len(b))
		all = append(all, b...)
	}
	if redraws != 1 {
		t.Fatalf("redraws %d", redraws)
	}
}

// TestLargePrefillIsNotLag: a prefill larger than Window (a long
// scrollback) makes the stream wait for the viewer before it reads the
// PTY, but that is not lag: a quiet terminal must not ask for a redraw,
// whose fresh stream would carry the same prefill and ask again, forever.
func TestLargePrefillIsNotLag(t *testing.T) {
	prefill := bytes.Repeat([]byte("scrollback line of some length, like a log\r\n"), (Window+Window/2)/44)
	// Like the agent's, it ends with a screen of newlines, which is how
	// tmux skipping lines looks: here it is no flood either.
	prefill = append(prefill, bytes.Repeat([]byte("\r\n"), 40)...)
	var suspends atomic.Int32
	s, err := Start(Options{Argv: []string{"/bin/sh", "-c", "echo READY; sleep 30"}, Env: []string{"PATH=/bin:/usr/bin"}, Prefill: prefill,
		Suspend: func(string) error { suspends.Add(1); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The pump waits on the full window before the viewer reads anything.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		s.mu.Lock()
		waits := s.waits
		s.mu.Unlock()
		if waits > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stream never waited for the viewer with a prefill over Window")
		}
	}
	_, off := readUntil(t, s, 0, "READY", 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 3*quietBeforeRedraw)
	defer cancel()
	if b, err := s.Read(ctx, off, 4096); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("quiet terminal after a large prefill: got %q, %v; want nothing", b, err)
	}
	if n := suspends.Load(); n != 0 {
		t.Fatalf("a prefill suspended the terminal %d times", n)
	}
}

// TestFloodSuspendsTheClient runs a flood in a real tmux session with a
// stream attached: the stream suspends its tmux client, wakes it, shows
// the end of the flood, asks for a redraw once it is quiet, and the client
// is awake afterwards. Output that is no flood suspends nothing.
func TestFloodSuspendsTheClient(t *testing.T) {
	ts := tmuxtest.New(t, nil)
	ts.NewSession("s", t.TempDir(), 80, 24, []string{"PS1=$ "}, "sh")
	var calls atomic.Int32
	serverPID, err := strconv.Atoi(strings.TrimSpace(ts.Display("s", "#{pid}")))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(Options{
		Argv: []string{"tmux", "-S", ts.Socket, "attach-session", "-t", "=s"},
		Env:  append(os.Environ(), "TERM=xterm-256color"), Cols: 80, Rows: 24,
		// tmux draws a 3M-line seq at 0.4-2 MB/s depending on the machine
		// and its load: a smaller flood size makes it a flood anywhere,
		// still far above 300 lines at once.
		FloodBytes: 16 << 10,
		Suspend: func(tty string) error {
			calls.Add(1)
			_, err := ts.Cmd("suspend-client", "-t", tty)
			return err
		},
		Activity: func() (uint64, error) { return proc.ReadChars(serverPID) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts.SendText("s", "seq 1 300; echo SMALL-$((1+1))\n")
	_, off := readUntil(t, s, 0, "SMALL-2", 10*time.Second)
	if n := calls.Load(); n != 0 {
		t.Fatalf("300 lines suspended the client %d times", n)
	}

	ts.SendText("s", "seq 1 3000000; echo FLOOD-$((2+2))\n")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var tail []byte
	redraw := false
	for !redraw {
		b, err := s.Read(ctx, off, 64<<10)
		if errors.Is(err, ErrRedraw) {
			if !bytes.Contains(tail, []byte("FLOOD-4")) {
				t.Fatalf("redraw before the end of the flood was shown (suspensions %d)", s.Suspensions())
			}
			redraw = true
			continue
		}
		if err != nil {
			t.Fatalf("read: %v (suspensions %d, calls %d)", err, s.Suspensions(), calls.Load())
		}
		off += uint64(len(b))
		tail = append(tail, b...)
		if len(tail) > 4096 {
			tail = tail[len(tail)-4096:]
		}
	}
	if s.Suspensions() == 0 {
		t.Fatalf("a flood of 3,000,000 lines never suspended the client (calls %d)", calls.Load())
	}
	t.Logf("suspensions: %d", s.Suspensions())
	// Awake: new output comes through.
	ts.SendText("s", "echo AWAKE-$((2+3))\n")
	readUntil(t, s, off, "AWAKE-5", 10*time.Second)
}

// TestNoRedrawWhileSuspending: a suspension can take a while (a tmux
// command or two on a busy machine), and the output pauses meanwhile. A
// viewer waiting for output must not take that pause for the end of the
// flood: a redraw in the middle of it would open a fresh stream that
// misses the lines scrolling between its capture and its attach.
func TestNoRedrawWhileSuspending(t *testing.T) {
	var calls atomic.Int32
	s, err := Start(Options{Argv: []string{"/bin/sh", "-c", "seq 1 100000; echo END-$((1+1)); sleep 30"}, Env: []string{"PATH=/bin:/usr/bin"},
		Suspend: func(string) error {
			calls.Add(1)
			time.Sleep(2 * quietBeforeRedraw) // slower than the viewer's patience
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var off uint64
	var tail []byte
	for !bytes.Contains(tail, []byte("END-2")) {
		b, err := s.Read(ctx, off, 64<<10)
		if errors.Is(err, ErrRedraw) {
			t.Fatalf("redraw in the middle of the flood (after %d suspensions, at offset %d)", calls.Load(), off)
		}
		if err != nil {
			t.Fatal(err)
		}
		off += uint64(len(b))
		tail = append(tail, b...)
		if len(tail) > 4096 {
			tail = tail[len(tail)-4096:]
		}
	}
	if calls.Load() < 2 {
		t.Fatalf("%d suspensions; the test needs a flood that suspends twice", calls.Load())
	}
	// Once it is over, the viewer is redrawn.
	if _, err := s.Read(ctx, off, 4096); !errors.Is(err, ErrRedraw) {
		t.Fatalf("after the flood: %v, want ErrRedraw", err)
	}
}

// TestScrolledAsksForRedraw: a stream whose terminal scrolled between its
// prefill and its attach asks for one redraw once quiet; the registry no
// longer resumes it, hands it to the fresh stream, and the fresh stream
// closes it once its own output has come.
func TestScrolledAsksForRedraw(t *testing.T) {
	for _, scrolled := range []bool{false, true} {
		t.Run(strconv.FormatBool(scrolled), func(t *testing.T) {
			var calls atomic.Int32
			opts := Options{Argv: []string{"/bin/sh", "-c", "echo READY; sleep 30"}, Env: []string{"PATH=/bin:/usr/bin"},
				Scrolled: func() bool { calls.Add(1); return scrolled }}
			s, err := Start(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			reg := NewRegistry(time.Minute)
			reg.Add("x", s)
			_, off := readUntil(t, s, 0, "READY", 5*time.Second)
			// Long enough for a redraw that comes; a redraw that should
			// not come gets three times the quiet it waits for.
			wait := 3 * quietBeforeRedraw
			if scrolled {
				wait = 10 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			_, err = s.Read(ctx, off, 4096)
			if n := calls.Load(); n != 1 {
				t.Errorf("Scrolled called %d times", n)
			}
			if !scrolled {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("nothing scrolled: %v, want no redraw", err)
				}
				if _, ok := reg.Get("x", s.ID); !ok || len(reg.TakeRedrawn("x")) != 0 {
					t.Fatal("a stream that needs no redraw is not resumable")
				}
				return
			}
			if !errors.Is(err, ErrRedraw) {
				t.Fatalf("scrolled: %v, want ErrRedraw", err)
			}
			if _, ok := reg.Get("x", s.ID); ok {
				t.Fatal("the registry resumes a stream that asked for a redraw")
			}
			old := reg.TakeRedrawn("x")
			if len(old) != 1 || old[0] != s || reg.Count() != 0 {
				t.Fatalf("TakeRedrawn gave %v, left %d", old, reg.Count())
			}
			if closed, _ := s.Closed(); closed {
				t.Fatal("closed before its replacement attached")
			}
			fresh, err := Start(Options{Argv: []string{"/bin/sh", "-c", "sleep 0.3; echo FRESH; sleep 30"}, Env: []string{"PATH=/bin:/usr/bin"}, Replaces: old})
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.Close()
			readUntil(t, fresh, 0, "FRESH", 5*time.Second)
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if closed, _ := s.Closed(); closed {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the replaced stream is still open after the fresh one's output")
				}
			}
		})
	}
}

// TestRegistrySweepsUnviewed: a stream that never had a viewer (its
// WebSocket failed after the open, or the hub gave up on it) is swept after
// the grace period like one whose viewer left.
func TestRegistrySweepsUnviewed(t *testing.T) {
	r := NewRegistry(time.Minute)
	s, err := Start(Options{Argv: []string{"/bin/sh", "-c", "sleep 30"}, Env: []string{"PATH=/bin:/usr/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r.Add("sess", s)
	now := time.Now()
	r.Sweep(now.Add(30 * time.Second))
	if _, ok := r.Get("sess", s.ID); !ok {
		t.Fatal("swept within the grace period")
	}
	r.Sweep(now.Add(2 * time.Minute))
	if closed, _ := s.Closed(); !closed || r.Count() != 0 {
		t.Fatal("a stream nobody ever viewed outlived the grace period")
	}
}

// A change of the window's size shows in the output as an OSC 6973
// report when the stream's owner says it may have changed (CheckSize):
// there is no timer.
func TestStreamReportsWindowSize(t *testing.T) {
	var mu sync.Mutex
	cols, rows := 80, 24
	size := func() (int, int, error) {
		mu.Lock()
		defer mu.Unlock()
		return cols, rows, nil
	}
	s, err := Start(Options{Argv: []string{"/bin/sh"}, Env: []string{"PATH=/bin:/usr/bin", "PS1=$ "}, Cols: 80, Rows: 24, WindowSize: size})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, off := readUntil(t, s, 0, "\x1b]6973;80;24\x07", 5*time.Second)
	mu.Lock()
	cols, rows = 142, 40
	mu.Unlock()
	s.CheckSize()
	readUntil(t, s, off, "\x1b]6973;142;40\x07", 5*time.Second)
}

// A size report waits for the end of an escape sequence or a character
// that the output left open.
func TestSizeReportBetweenSequences(t *testing.T) {
	s := &Stream{ring: make([]byte, RingSize), wake: make(chan struct{}), rows: 24}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appendLocked([]byte("a\x1b]0;tit"))
	s.pendingSize = []byte("<size>")
	for _, part := range []string{"le\x1b", "\\€"[:2], "€"[1:2], "€"[2:]} {
		s.appendLocked([]byte(part))
	}
	s.appendLocked([]byte("\x1b[3"))
	s.appendLocked([]byte("1mz"))
	got := string(s.ring[:s.end])
	if want := "a\x1b]0;title\x1b\\€<size>\x1b[31mz"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
}

// stepVT is the byte-by-byte state machine that scanVT must agree with.
func stepVT(st vtState, utf8Left *int, p []byte) vtState {
	for _, b := range p {
		switch st {
		case vtGround, vtUTF8:
			switch {
			case st == vtUTF8 && b&0xC0 == 0x80:
				if *utf8Left--; *utf8Left == 0 {
					st = vtGround
				}
				continue
			case b == 0x1b:
				st = vtEsc
			case b >= 0xF0 && b < 0xF8:
				st, *utf8Left = vtUTF8, 3
			case b >= 0xE0 && b < 0xF0:
				st, *utf8Left = vtUTF8, 2
			case b >= 0xC0 && b < 0xE0:
				st, *utf8Left = vtUTF8, 1
			default:
				st = vtGround
			}
		case vtEsc:
			switch {
			case b == '[':
				st = vtCSI
			case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
				st = vtString
			case b >= 0x20 && b <= 0x2F:
				st = vtEscInter
			case b == 0x1b:
			default:
				st = vtGround
			}
		case vtEscInter:
			if b < 0x20 || b > 0x2F {
				st = vtGround
			}
		case vtCSI:
			if b >= 0x40 && b <= 0x7E {
				st = vtGround
			} else if b == 0x1b {
				st = vtEsc
			}
		case vtString:
			if b == 0x07 {
				st = vtGround
			} else if b == 0x1b {
				st = vtStringEsc
			}
		case vtStringEsc:
			if b == '\\' {
				st = vtGround
			} else if b != 0x1b {
				st = vtString
			}
		}
	}
	return st
}

// lfRunRef is the byte-by-byte newline count that newlineRun must agree
// with.
func lfRunRef(run, rows int, p []byte) (int, bool) {
	reached := false
	for _, b := range p {
		switch b {
		case '\n':
			run++
			if run >= rows {
				reached = true
			}
		case '\r':
		default:
			run = 0
		}
	}
	return run, reached
}

func TestScanVT(t *testing.T) {
	for _, c := range []struct {
		in   string
		want vtState
	}{
		{"abc", vtGround},
		{"a\x1b", vtEsc},
		{"\x1b[3", vtCSI},
		{"\x1b[31m", vtGround},
		{"\x1b]0;title", vtString},
		{"\x1b]0;title\x07", vtGround},
		{"\x1bP1$r\x1b", vtStringEsc},
		{"\x1bP1$r\x1b\\", vtGround},
		{"é"[:1], vtUTF8},
		{"é", vtGround},
		{"€"[:2], vtUTF8},
		{"\x1b(B", vtGround},
	} {
		if got, _ := scanVT(vtGround, 0, []byte(c.in)); got != c.want {
			t.Errorf("scanVT(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

// scanVT and newlineRun skip text in large steps; they must end where the
// byte-by-byte machines do, for any output cut anywhere.
func TestScanAgreesBytewise(t *testing.T) {
	alphabet := []byte("ab \r\n\r\n\x1b\x1b\x1b[]P_X^\\;0m(\x07\x20\x2f\x40\x7e\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xff\x80")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		p := make([]byte, rng.IntN(40))
		for i := range p {
			p[i] = alphabet[rng.IntN(len(alphabet))]
		}
		// The reference over the whole, scanVT over pieces.
		left := 0
		want := stepVT(vtGround, &left, p)
		wantRun, wantReached := lfRunRef(0, 3, p)
		st, l, run, reached := vtGround, 0, 0, false
		for rest := p; len(rest) > 0; {
			n := 1 + rng.IntN(len(rest))
			st, l = scanVT(st, l, rest[:n])
			var r bool
			run, r = newlineRun(run, 3, rest[:n])
			reached = reached || r
			rest = rest[n:]
		}
		if st != want || (st == vtUTF8 && l != left) {
			t.Fatalf("%q: scanVT ends at %d (utf8Left %d), bytewise at %d (%d)", p, st, l, want, left)
		}
		if run != wantRun || reached != wantReached {
			t.Fatalf("%q: newlineRun %d %v, bytewise %d %v", p, run, reached, wantRun, wantReached)
		}
	}
}

// BenchmarkStreamScan is what every byte of output costs a stream before it
// goes into the ring: the newline count and the escape-sequence state.
// Claude's screen is text with colour sequences, a `cat` is plain text.
func BenchmarkStreamScan(b *testing.B) {
	var colour, plain bytes.Buffer
	for i := 0; colour.Len() < readChunk; i++ {
		fmt.Fprintf(&colour, "\x1b[38;2;%d;100;200m● line %d \x1b[0m— some text here, and more of it\r\n", i%256, i)
	}
	for i := 0; plain.Len() < readChunk; i++ {
		fmt.Fprintf(&plain, "%d the quick brown fox jumps over the lazy dog, the quick brown fox\r\n", i)
	}
	for _, c := range []struct {
		name string
		p    []byte
	}{{"text", plain.Bytes()[:readChunk]}, {"colour", colour.Bytes()[:readChunk]}} {
		b.Run(c.name+"/scan", func(b *testing.B) {
			b.SetBytes(int64(len(c.p)))
			st, l, run := vtGround, 0, 0
			for b.Loop() {
				st, l = scanVT(st, l, c.p)
				run, _ = newlineRun(run, 40, c.p)
			}
		})
		b.Run(c.name+"/bytewise", func(b *testing.B) {
			b.SetBytes(int64(len(c.p)))
			st, l, run := vtGround, 0, 0
			for b.Loop() {
				st = stepVT(st, &l, c.p)
				run, _ = lfRunRef(run, 40, c.p)
			}
		})
		b.Run(c.name+"/append", func(b *testing.B) {
			s := &Stream{ring: make([]byte, RingSize), wake: make(chan struct{}), rows: 40}
			b.SetBytes(int64(len(c.p)))
			for b.Loop() {
				s.mu.Lock()
				s.appendLocked(c.p)
				s.mu.Unlock()
			}
		})
	}
}
