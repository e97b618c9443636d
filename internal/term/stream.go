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
package term

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
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
	waits int
	// rows is the terminal's height; lfRun counts the newlines in a row at
	// the end of the output so far.
	rows  int
	lfRun int
	wake  chan struct{} // closed and replaced whenever the state changes
	// attached counts viewers reading now; idleSince is when the last one
	// left, for the registry's grace period.
	attached  int
	idleSince time.Time
}

// Options start a stream.
type Options struct {
	// Argv is the attach command, e.g. tmux attach-session -t =id.
	Argv []string
	Env  []string
	Cols int
	Rows int
	// Prefill is written to the stream before the command's output: the
	// scrollback a new viewer should see above the live screen.
	Prefill []byte
}

// Start runs the command under a new PTY.
func Start(opts Options) (*Stream, error) {
	if len(opts.Argv) == 0 {
		return nil, errors.New("term: no command")
	}
	cols, rows := clampSize(opts.Cols, opts.Rows)
	cmd := exec.Command(opts.Argv[0], opts.Argv[1:]...)
	cmd.Env = opts.Env
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		return nil, fmt.Errorf("term: start %s: %w", opts.Argv[0], err)
	}
	var id [8]byte
	rand.Read(id[:])
	s := &Stream{ID: hex.EncodeToString(id[:]), cmd: cmd, pty: ptmx, ring: make([]byte, RingSize), wake: make(chan struct{}), rows: rows}
	if len(opts.Prefill) > 0 {
		s.appendLocked(opts.Prefill)
		// The scrollback ends with newlines that push it up: by design.
		s.lagged, s.lfRun = false, 0
		s.prefillEnd = s.end
	}
	go s.pump()
	return s, nil
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
	for _, b := range p {
		switch b {
		case '\n':
			s.lfRun++
			if s.lfRun >= s.rows {
				s.lagged = true
			}
		case '\r':
		default:
			s.lfRun = 0
		}
	}
	for len(p) > 0 {
		i := int(s.end % RingSize)
		n := copy(s.ring[i:], p)
		p = p[n:]
		s.end += uint64(n)
	}
	if s.end-s.start > RingSize {
		s.start = s.end - RingSize
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
		}
		if err != nil {
			s.closeLocked(err)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
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

func (s *Stream) closeLocked(err error) {
	if s.closed {
		return
	}
	s.closed = true
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
		if s.lagged {
			quiet = time.After(quietBeforeRedraw)
		}
		s.mu.Unlock()
		select {
		case <-w:
		case <-quiet:
			s.mu.Lock()
			if s.lagged && offset == s.end {
				s.lagged = false
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

// Attach and Detach count the viewers reading now.
func (s *Stream) Attach() {
	s.mu.Lock()
	s.attached++
	s.mu.Unlock()
}

// Detach marks a viewer gone.
func (s *Stream) Detach() {
	s.mu.Lock()
	s.attached--
	if s.attached == 0 {
		s.idleSince = time.Now()
	}
	s.mu.Unlock()
}

// idleFor says how long nobody has read the stream (0 while someone does).
func (s *Stream) idleFor(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.attached > 0 || s.idleSince.IsZero() {
		return 0
	}
	return now.Sub(s.idleSince)
}

// Close ends the stream: the attach command gets a hangup and exits.
func (s *Stream) Close() error {
	s.mu.Lock()
	s.closeLocked(nil)
	s.mu.Unlock()
	err := s.pty.Close()
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
	return err
}

// StreamID names the stream for resuming.
func (s *Stream) StreamID() string { return s.ID }
