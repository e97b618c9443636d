// Package term streams terminals: a Stream is a PTY running a command that
// attaches to a terminal (tmux attach-session), its output kept in a ring
// with absolute byte offsets so that a viewer that lost its connection can
// resume exactly where it stopped.
//
// Flow control is backpressure: when the viewer has not taken the last
// Window bytes, the stream stops reading the PTY. tmux then holds back
// output for that one client (and redraws it when it catches up), so a
// flood never grows corral's memory and never slows the program in the
// pane or any other viewer.
//
// A flood is also cut short at its source. tmux renders every line for an
// attached client, even one whose output it then discards, and that costs
// the tmux server (the bottleneck of a flood) 15-30% more time. So during
// a flood the stream suspends its client (Options.Suspend). It wakes the
// client, which then draws the current screen whole, as soon as the flood
// stops (Options.Activity) or after maxSleep, and suspends it again if the
// flood goes on. Afterwards the viewer is redrawn with the complete
// scrollback, as after any lag.
package term

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
)

// Sizes of a stream's buffers.
const (
	// RingSize is how much recent output a stream keeps for resuming.
	RingSize = 256 << 10
	// Window is how far the producer may run ahead of the viewer before it
	// pauses; the rest of the ring is history for resuming.
	Window = 128 << 10
	// readChunk is one read from the PTY.
	readChunk = 32 << 10
)

// ErrGap says the bytes a viewer asked for are no longer in the ring.
var ErrGap = errors.New("term: output no longer available")

// ErrClosed says the stream ended (the attach command exited).
var ErrClosed = errors.New("term: stream closed")

// ErrRedraw says the stream held its producer back (the viewer was
// slower than the output), so the terminal program may have drawn only the
// latest screen and skipped lines: now that the output is quiet, the viewer
// should start a fresh stream, whose scrollback is complete.
var ErrRedraw = errors.New("term: viewer fell behind; redraw")

// coalesce is the pause between reads while output keeps coming.
const coalesce = 2 * time.Millisecond

// quietBeforeRedraw is how long output must pause before a lagged viewer
// is redrawn: a redraw in the middle of a flood would only lag again.
const quietBeforeRedraw = 300 * time.Millisecond

// A flood is floodBytes of output within floodWindow: several full
// redraws of a large screen at once, more than an interactive program
// (Claude's own interface included) draws in that time.
const (
	floodWindow = 50 * time.Millisecond
	floodBytes  = 64 << 10
)

// A suspended client sleeps while Options.Activity grows by more than
// quietBytes every activityPoll, and at most maxSleep, so that a long
// flood still shows on screen a few times a second. Without Activity it
// sleeps blindSleep.
const (
	activityPoll = 10 * time.Millisecond
	quietBytes   = 16 << 10
	maxSleep     = 250 * time.Millisecond
	blindSleep   = 40 * time.Millisecond
)

// How a viewer misses lines: when output scrolls faster than tmux flushes
// to a client, tmux scrolls the whole screen at once and draws only the
// newest lines; what scrolled through in between never reaches the client.
// corral's tmux config removes the terminal's multi-line scroll (indn),
// which xterm.js does not keep in scrollback, so tmux scrolls with one
// newline per line and such a skip shows as a run of at least a screen's
// height of newlines. Seen in a stream, it calls for a redraw.

// Stream is one attached terminal.
type Stream struct {
	ID string

	cmd *exec.Cmd
	pty *os.File
	tty string // the PTY's device, the attached client's name in tmux

	// suspend pauses the client's drawing and activity tells when to
	// resume it (Options). Only pump uses them and the flood state below.
	suspend      func(tty string) error
	activity     func() (uint64, error)
	scrolled     func() bool // Options.Scrolled, until pump called it
	stats        *Stats      // Options.Stats
	replaces     []*Stream   // Options.Replaces, until pump closed them
	floodFrom    time.Time   // start of the current flood window
	floodN       int         // bytes read in it
	floodBytes   int         // a flood's size (floodBytes, or Options.FloodBytes)
	suspendAfter time.Time   // no suspending before (after a failure)

	mu      sync.Mutex
	ring    []byte // circular, RingSize
	start   uint64 // offset of the oldest byte kept
	end     uint64 // offset after the newest byte
	taken   uint64 // highest offset handed to the viewer
	closed  bool
	exitErr error
	// lagged: the producer waited for the viewer, or tmux skipped lines,
	// since the last redraw.
	lagged bool
	// prefillEnd is where the prefill (scrollback) ends: a viewer still
	// reading it is not behind the terminal.
	prefillEnd uint64
	// waits counts the producer's waits for the viewer (tests await it).
	waits    int
	utf8Left int
	// rows is the terminal's height; lfRun counts the newlines in a row at
	// the end of the output so far.
	rows  int
	lfRun int
	// skipped: tmux skipped lines since pump last looked, a flood.
	skipped bool
	wake    chan struct{} // closed and replaced whenever the state changes
	// attached counts viewers reading now; idleSince is when the last one
	// left (or when the stream started, for one nobody ever read), for the
	// registry's grace period.
	attached  int
	idleSince time.Time
	// asleep: the client is suspended, and sleep will wake it; suspends
	// counts suspensions (tests, benchmarks).
	asleep   bool
	suspends int
	// redrawn: the stream asked its viewer for a redraw; the viewer moves
	// to a fresh stream, which replaces this one (Options.Replaces).
	redrawn bool
	// vt is where the output so far leaves a terminal parser, so that a
	// size report goes in only between sequences and characters;
	// pendingSize is a report waiting for such a point.
	vt          vtState
	pendingSize []byte
	// done is closed when the stream closes; poke wakes the window-size
	// watcher (CheckSize).
	done chan struct{}
	poke chan struct{}

	// Close runs once, whoever calls it (the viewer, the registry, the
	// stream that replaces this one); later calls wait for it.
	closeOnce sync.Once
	closeErr  error
	// wg counts the pump and the goroutines it starts (a first-output
	// check, a wake-up, the close of replaced streams): Close waits for
	// them. Only Start and the pump, while it is counted, Add.
	wg sync.WaitGroup
}

// Options start a stream.
type Options struct {
	// FloodBytes overrides floodBytes (tests: how fast tmux can draw
	// depends on the machine, and a test needs a flood whatever it is).
	FloodBytes int
	// Argv is the attach command, e.g. tmux attach-session -t =id.
	Argv []string
	Env  []string
	Cols int
	Rows int
	// Prefill is written to the stream before the command's output: the
	// scrollback a new viewer should see above the live screen.
	Prefill []byte
	// Suspend, when set, makes the program on the other end of the PTY
	// (the tmux client) stop drawing to it until the client process gets
	// SIGCONT, and then redraw it whole: tmux suspend-client does that.
	// It is given the PTY's device path. A stream calls it during floods;
	// after an error it draws as usual for a while.
	Suspend func(tty string) error
	// Activity, with Suspend, returns a count that grows with the output
	// the terminal's program is taking in, for tmux the bytes its server
	// has read. A suspended client is woken as soon as it stops growing
	// fast: the flood is over, and the viewer should see its end at once.
	Activity func() (uint64, error)
	// Scrolled, when set, is called once, on a goroutine of its own, when
	// the command's first output arrives. True says lines scrolled away
	// in the terminal between the capture of the Prefill and the attach,
	// so the viewer lacks them (the attach draws only the screen): the
	// stream asks for a redraw once the output is quiet, as after a lag.
	Scrolled func() bool
	// WindowSize, when set, returns the size of the window the terminal
	// shows (which another viewer may have set: tmux's window-size latest).
	// The stream asks it when it starts and after each CheckSize, and
	// reports each change in its output as OSC 6973
	// ("ESC ] 6973 ; cols ; rows BEL"), in order with the output, so that
	// the viewer can draw at the window's size (docs/web-protocol.md).
	// The stream does not poll: its owner calls CheckSize when the window
	// may have changed (the agent: on tmux's window-resized hook).
	WindowSize func() (cols, rows int, err error)
	// Replaces are streams of the same terminal that asked for a redraw
	// (Registry.TakeRedrawn). They stay attached until this one's first
	// output, and then close: closed first, they could let the window
	// change size and back (the latest client decides it), which moves
	// lines between its screen and its history under this stream's
	// attach, so that it would ask for a redraw in turn, forever.
	Replaces []*Stream
	// Stats, when set, counts this stream's output and redraws, with
	// those of every stream given the same Stats.
	Stats *Stats
}

// Stats counts what streams did, for metrics.
type Stats struct {
	// Bytes is the output taken in from the PTYs; Redraws the times a
	// viewer that fell behind was told to redraw.
	Bytes, Redraws atomic.Uint64
}

// Start runs the command under a new PTY.
func Start(opts Options) (*Stream, error) {
	if len(opts.Argv) == 0 {
		return nil, errors.New("term: no command")
	}
	cols, rows := clampSize(opts.Cols, opts.Rows)
	cmd := exec.Command(opts.Argv[0], opts.Argv[1:]...)
	cmd.Env = opts.Env
	ptmx, tty, err := startPTY(cmd, cols, rows)
	if err != nil {
		return nil, fmt.Errorf("term: start %s: %w", opts.Argv[0], err)
	}
	var id [8]byte
	rand.Read(id[:])
	if opts.FloodBytes <= 0 {
		opts.FloodBytes = floodBytes
	}
	s := &Stream{ID: hex.EncodeToString(id[:]), cmd: cmd, pty: ptmx, tty: tty, suspend: opts.Suspend, activity: opts.Activity, scrolled: opts.Scrolled,
		floodBytes: opts.FloodBytes,
		replaces:   opts.Replaces, stats: opts.Stats,
		ring: make([]byte, RingSize), wake: make(chan struct{}), rows: rows, idleSince: time.Now(),
		done: make(chan struct{}), poke: make(chan struct{}, 1)}
	if len(opts.Prefill) > 0 {
		s.appendLocked(opts.Prefill)
		// The scrollback ends with newlines that push it up: by design.
		s.lagged, s.skipped, s.lfRun = false, false, 0
		s.prefillEnd = s.end
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.pump()
	}()
	if opts.WindowSize != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.watchSize(opts.WindowSize)
		}()
	}
	return s, nil
}

// SizeOSC is the OSC number of a window-size report.
const SizeOSC = 6973

// watchSize reports the window's size in the output when the stream starts
// and whenever a CheckSize finds it changed. There is no timer: the window
// changes size only when tmux resizes it, and the stream's owner hears of
// that (Options.WindowSize).
func (s *Stream) watchSize(size func() (int, int, error)) {
	var lastC, lastR int
	for {
		if c, r, err := size(); err == nil && c > 0 && r > 0 && (c != lastC || r != lastR) {
			lastC, lastR = c, r
			s.mu.Lock()
			s.pendingSize = fmt.Appendf(nil, "\x1b]%d;%d;%d\x07", SizeOSC, c, r)
			if s.vt == vtGround {
				s.flushSizeLocked()
			}
			s.mu.Unlock()
		}
		select {
		case <-s.done:
			return
		case <-s.poke:
		}
	}
}

// CheckSize makes the stream ask the window's size again (Options.WindowSize)
// and report it if it changed. It never blocks: pokes that come while one
// is pending fold into it.
func (s *Stream) CheckSize() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// flushSizeLocked appends the pending size report.
func (s *Stream) flushSizeLocked() {
	p := s.pendingSize
	s.pendingSize = nil
	s.appendLocked(p)
}

// vtState is a terminal parser's state, as far as a report needs it.
type vtState uint8

const (
	vtGround    vtState = iota
	vtUTF8              // inside a multi-byte character
	vtEsc               // after ESC
	vtEscInter          // ESC and intermediates
	vtCSI               // ESC [ ...
	vtString            // OSC, DCS, APC, PM, SOS: until BEL or ST
	vtStringEsc         // ESC inside a string (ST's first byte)
)

// scanVT follows output through a terminal parser's states, from st, and
// returns the state at its end; utf8Left counts the continuation bytes
// still due in vtUTF8. It runs on every byte of output, so text between
// sequences is skipped with bytes.IndexByte, and only the bytes of a
// sequence, and the last few of a run of text (which may end inside a
// multi-byte character), go through the state machine.
func scanVT(st vtState, utf8Left int, p []byte) (vtState, int) {
	i := 0
	for i < len(p) {
		switch st {
		case vtUTF8:
			if b := p[i]; b&0xC0 == 0x80 {
				i++
				if utf8Left--; utf8Left == 0 {
					st = vtGround
				}
				continue
			}
			// Any other byte ends the character and counts as text, or
			// as the ESC it is.
			st = vtGround
		case vtGround:
			j := bytes.IndexByte(p[i:], 0x1b)
			if j < 0 {
				return utf8Tail(p[i:])
			}
			i += j + 1
			st = vtEsc
		case vtEsc:
			b := p[i]
			i++
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
			if b := p[i]; b < 0x20 || b > 0x2F {
				st = vtGround
			}
			i++
		case vtCSI:
			for i < len(p) {
				b := p[i]
				i++
				if b >= 0x40 && b <= 0x7E {
					st = vtGround
					break
				}
				if b == 0x1b {
					st = vtEsc
					break
				}
			}
		case vtString:
			for i < len(p) {
				b := p[i]
				i++
				if b == 0x07 {
					st = vtGround
					break
				}
				if b == 0x1b {
					st = vtStringEsc
					break
				}
			}
		case vtStringEsc:
			if b := p[i]; b == '\\' {
				st = vtGround
			} else if b != 0x1b {
				st = vtString
			}
			i++
		}
	}
	return st, utf8Left
}

// utf8Tail is the state after text (no ESC in it): inside a character when
// its last lead byte still lacks continuation bytes. A lead byte needs at
// most three, so only the last four bytes can tell.
func utf8Tail(p []byte) (vtState, int) {
	for k := len(p) - 1; k >= 0 && k >= len(p)-4; k-- {
		b := p[k]
		if b&0xC0 == 0x80 {
			continue
		}
		need := 0
		switch {
		case b >= 0xF0 && b < 0xF8:
			need = 3
		case b >= 0xE0 && b < 0xF0:
			need = 2
		case b >= 0xC0 && b < 0xE0:
			need = 1
		}
		if have := len(p) - 1 - k; have < need {
			return vtUTF8, need - have
		}
		return vtGround, 0
	}
	return vtGround, 0
}

// newlineRun follows the run of newlines (with only carriage returns
// between them) at the end of the output, from run, through p, and says
// whether it reached rows at any point of p. Lines are found with
// bytes.IndexByte; of each line only its bytes up to the first that is not
// a carriage return are looked at, which for text is one.
func newlineRun(run, rows int, p []byte) (int, bool) {
	reached := false
	for {
		j := bytes.IndexByte(p, '\n')
		line := p
		if j >= 0 {
			line = p[:j]
		}
		for _, b := range line {
			if b != '\r' {
				run = 0
				break
			}
		}
		if j < 0 {
			return run, reached
		}
		run++
		if run >= rows {
			reached = true
		}
		p = p[j+1:]
	}
}

// startPTY runs cmd on a new PTY of the given size as pty.StartWithSize
// does (its own session, the PTY as controlling terminal), and also returns
// the PTY's device path, which names the tmux client it runs.
func startPTY(cmd *exec.Cmd, cols, rows int) (*os.File, string, error) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		return nil, "", err
	}
	defer tty.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		ptmx.Close()
		return nil, "", err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		ptmx.Close()
		return nil, "", err
	}
	return ptmx, tty.Name(), nil
}

func clampSize(cols, rows int) (int, int) {
	if cols <= 0 {
		cols = 120
	}
	if rows <= 0 {
		rows = 40
	}
	return min(max(cols, 10), 1000), min(max(rows, 5), 500)
}

func (s *Stream) wakeLocked() {
	close(s.wake)
	s.wake = make(chan struct{})
}

// appendLocked adds output to the ring, dropping the oldest bytes. Offset
// o lives at ring[o % RingSize].
func (s *Stream) appendLocked(p []byte) {
	if len(p) > RingSize {
		s.end += uint64(len(p) - RingSize)
		p = p[len(p)-RingSize:]
	}
	var reached bool
	if s.lfRun, reached = newlineRun(s.lfRun, s.rows, p); reached {
		s.lagged, s.skipped = true, true
	}
	s.vt, s.utf8Left = scanVT(s.vt, s.utf8Left, p)
	for len(p) > 0 {
		i := int(s.end % RingSize)
		n := copy(s.ring[i:], p)
		p = p[n:]
		s.end += uint64(n)
	}
	if s.end-s.start > RingSize {
		s.start = s.end - RingSize
	}
	if s.pendingSize != nil && s.vt == vtGround {
		s.flushSizeLocked()
	}
	s.wakeLocked()
}

// pump copies the PTY's output into the ring, pausing while the viewer is
// a whole Window behind.
func (s *Stream) pump() {
	buf := make([]byte, readChunk)
	var last time.Time
	for {
		s.mu.Lock()
		for !s.closed && s.end-s.taken >= Window {
			// Waiting while the viewer reads a large prefill holds back
			// nothing it would miss: only a wait past it is lag.
			if s.taken >= s.prefillEnd {
				s.lagged = true
			}
			s.waits++
			w := s.wake
			s.mu.Unlock()
			<-w
			s.mu.Lock()
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return
		}
		n, err := s.pty.Read(buf)
		s.mu.Lock()
		if n > 0 {
			s.appendLocked(buf[:n])
			if s.stats != nil {
				s.stats.Bytes.Add(uint64(n))
			}
		}
		if err != nil {
			s.closeLocked(err)
			s.mu.Unlock()
			s.closeReplaced()
			return
		}
		s.mu.Unlock()
		if n > 0 {
			s.closeReplaced()
		}
		if n > 0 && s.scrolled != nil {
			// The attach has drawn its first screen. Scrolled may take a
			// while (it waits for the window to take this terminal's
			// size): the output goes on meanwhile.
			s.wg.Add(1)
			go func(scrolled func() bool) {
				defer s.wg.Done()
				if scrolled() {
					s.mu.Lock()
					s.lagged = true
					s.wakeLocked() // a viewer waiting now starts its quiet timer
					s.mu.Unlock()
				}
			}(s.scrolled)
			s.scrolled = nil
		}
		s.checkFlood(n)
		// Output that keeps coming (this read returned soon after the
		// last) is read in larger pieces: a short pause lets it collect in
		// the PTY, so a flood costs fewer reads, wakeups and messages to
		// the viewer, and tmux skips frames for this client rather than
		// drawing every line. A lone burst (typing) goes out at once.
		now := time.Now()
		if n < readChunk && now.Sub(last) < coalesce {
			time.Sleep(coalesce)
		}
		last = now
	}
}

// closeReplaced closes the streams this one replaces, now that it is
// attached (or will never be).
func (s *Stream) closeReplaced() {
	for _, old := range s.replaces {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			old.Close()
		}()
	}
	s.replaces = nil
}

// checkFlood counts output and suspends the client when a flood starts
// (see the package comment). While it is suspended nothing comes, so pump
// simply waits in its read until the wake-up's redraw arrives.
func (s *Stream) checkFlood(n int) {
	if s.suspend == nil {
		return
	}
	now := time.Now()
	if now.Sub(s.floodFrom) > floodWindow {
		s.floodFrom, s.floodN = now, 0
	}
	s.floodN += n
	s.mu.Lock()
	asleep, skipped := s.asleep, s.skipped
	s.skipped = false
	s.mu.Unlock()
	// tmux skipping lines for this client is the surest sign: it could
	// not keep up. The byte count catches a flood that a fast viewer
	// keeps up with. Output drawn just before a suspension is no sign.
	if (s.floodN < s.floodBytes && !skipped) || asleep {
		return
	}
	s.floodN = 0
	if now.Before(s.suspendAfter) {
		s.mu.Lock()
		s.lagged = true // see below
		s.mu.Unlock()
		return
	}
	var mark uint64
	if s.activity != nil {
		var err error
		if mark, err = s.activity(); err != nil {
			s.activity = nil
		}
	}
	// Asleep before the suspension starts, which takes a tmux command or
	// two: a viewer waiting for output must not take the pause for the
	// end of the flood and ask for a redraw in the middle of it (the
	// fresh stream would then miss what scrolls between its capture of
	// the history and its attach).
	s.mu.Lock()
	s.asleep = true
	s.wakeLocked()
	s.mu.Unlock()
	err := s.suspend(s.tty)
	s.mu.Lock()
	defer s.mu.Unlock()
	// A flood this fast makes tmux hold back or skip drawing for the
	// client whether or not it sleeps: the viewer needs a redraw once it
	// is over.
	s.lagged = true
	if err != nil {
		// Say another viewer of another size is attached: draw as usual
		// for a while rather than ask again at every window.
		s.suspendAfter = now.Add(2 * time.Second)
		s.asleep = false
		s.wakeLocked()
		return
	}
	s.suspends++
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.sleep(s.activity, mark)
	}()
}

// sleep wakes the suspended client once the flood is over, or after
// maxSleep. On SIGCONT a tmux client asks its server to wake it, and the
// server redraws its screen whole.
func (s *Stream) sleep(activity func() (uint64, error), mark uint64) {
	start := time.Now()
	for {
		wait := activityPoll
		if activity == nil {
			wait = blindSleep
		}
		time.Sleep(wait)
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed || activity == nil || time.Since(start) >= maxSleep {
			break
		}
		now, err := activity()
		if err != nil || now-mark < quietBytes {
			break
		}
		mark = now
	}
	s.mu.Lock()
	s.asleep = false
	s.wakeLocked()
	s.mu.Unlock()
	_ = s.cmd.Process.Signal(syscall.SIGCONT)
}

// Suspensions says how often the stream suspended its client.
func (s *Stream) Suspensions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.suspends
}

func (s *Stream) closeLocked(err error) {
	if s.closed {
		return
	}
	s.closed = true
	close(s.done)
	if errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO) {
		err = nil // the PTY's other side went away: a normal end
	}
	s.exitErr = err
	s.wakeLocked()
}

// Read returns output from offset on, at most max bytes, waiting until
// there is some. It returns ErrGap if offset fell out of the ring and
// ErrClosed once the stream ended and everything was read.
func (s *Stream) Read(ctx context.Context, offset uint64, max int) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if offset < s.start || offset > s.end {
			return nil, ErrGap
		}
		if offset < s.end {
			n := int(min(uint64(max), s.end-offset))
			out := make([]byte, n)
			for i := 0; i < n; {
				j := int((offset + uint64(i)) % RingSize)
				i += copy(out[i:], s.ring[j:min(RingSize, j+n-i)])
			}
			if offset+uint64(n) > s.taken {
				s.taken = offset + uint64(n)
				s.wakeLocked() // the producer may go on
			}
			return out, nil
		}
		if s.closed {
			return nil, ErrClosed
		}
		w := s.wake
		var quiet <-chan time.Time
		// A suspended client is quiet only because it sleeps: its wake-up
		// (which wakes this wait too) brings output.
		if s.lagged && !s.asleep {
			quiet = time.After(quietBeforeRedraw)
		}
		s.mu.Unlock()
		select {
		case <-w:
		case <-quiet:
			s.mu.Lock()
			if s.lagged && !s.asleep && offset == s.end {
				s.lagged = false
				s.redrawn = true
				if s.stats != nil {
					s.stats.Redraws.Add(1)
				}
				return nil, ErrRedraw
			}
			continue
		case <-ctx.Done():
			s.mu.Lock()
			return nil, ctx.Err()
		}
		s.mu.Lock()
	}
}

// Offsets returns the oldest and the next offset of the ring.
func (s *Stream) Offsets() (start, end uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.start, s.end
}

// Write sends input to the terminal.
func (s *Stream) Write(p []byte) (int, error) {
	return s.pty.Write(p)
}

// Resize changes the terminal's size.
func (s *Stream) Resize(cols, rows int) error {
	cols, rows = clampSize(cols, rows)
	s.mu.Lock()
	s.rows = rows
	s.mu.Unlock()
	return pty.Setsize(s.pty, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
}

// Closed reports whether the stream ended, and why (nil for a normal end).
func (s *Stream) Closed() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed, s.exitErr
}

// AddViewer and DropViewer count the viewers reading now.
func (s *Stream) AddViewer() {
	s.mu.Lock()
	s.attached++
	s.mu.Unlock()
}

// DropViewer marks a viewer gone.
func (s *Stream) DropViewer() {
	s.mu.Lock()
	s.attached--
	if s.attached == 0 {
		s.idleSince = time.Now()
	}
	s.mu.Unlock()
}

// idleFor says how long nobody has read the stream (0 while someone does):
// a stream that never had a viewer counts from its start, so that it too is
// swept after the grace period.
func (s *Stream) idleFor(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.attached > 0 {
		return 0
	}
	return now.Sub(s.idleSince)
}

// Close ends the stream: the attach command gets a hangup and exits. It
// returns once the stream's goroutines have.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		defer s.wg.Wait()
		s.mu.Lock()
		s.closeLocked(nil)
		s.mu.Unlock()
		s.closeErr = s.pty.Close()
		if s.cmd.Process != nil {
			_ = s.cmd.Process.Signal(syscall.SIGHUP)
			done := make(chan struct{})
			go func() { s.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(2 * time.Second):
				_ = s.cmd.Process.Kill()
				<-done
			}
		}
	})
	return s.closeErr
}

// StreamID names the stream for resuming.
func (s *Stream) StreamID() string { return s.ID }

func (s *Stream) isRedrawn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.redrawn
}
