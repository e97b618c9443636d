// Package hookwire is the wire format of hook deliveries: it carries Claude
// Code's hook and status line payloads from the short-lived `corral hook` /
// `corral statusline` processes to the agent over a unix socket.
//
// The wire format is deliberately tiny, because Claude waits for every hook:
// one connection per delivery, a JSON header line, then the payload bytes
// exactly as Claude wrote them until the writer closes its side. No reply:
// the sender never waits for the agent to process anything.
package hookwire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// Kinds of delivery.
const (
	KindHook       = "hook"
	KindStatusLine = "statusline"
)

// Limits. The header is small. The real payloads of Claude Code 2.1.197
// (testdata) are under 1 KiB, status lines under 1 KiB; a payload grows with
// a tool's input or output: a Write's content, an Edit's whole original file
// (Claude edits files up to 1 GiB), a Bash output (30,000 characters by
// default). 1 MiB holds every ordinary one; beyond it the sender sends the
// first MaxPayload bytes with Truncated set, and the agent reads the fields
// that came before the cut (hooks.ParsePrefix): the event and the tool,
// without its input.
const (
	MaxHeader  = 4 << 10
	MaxPayload = 1 << 20
)

// Header describes one delivery: what the hook process knew about where it
// runs. Claude passes its own environment to hooks, so the pane's variables
// arrive here.
type Header struct {
	Kind string `json:"kind"`
	// At is when the hook process started, in Unix nanoseconds: the closest
	// the agent can get to when Claude fired the event.
	At int64 `json:"at"`
	// PID and PPID of the hook process (the parent is Claude or its shell).
	PID  int `json:"pid"`
	PPID int `json:"ppid"`
	// Session is $CORRAL_SESSION, set in every pane corral starts.
	Session string `json:"session,omitempty"`
	// Pane and Tmux are $TMUX_PANE and $TMUX, for claude started by hand in a
	// tmux pane.
	Pane string `json:"pane,omitempty"`
	Tmux string `json:"tmux,omitempty"`
	// ClaudePID and ClaudeStart identify the claude process that ran the
	// hook (its pid and start time, against pid reuse), found by the hook
	// process itself: by the time the agent reads the delivery, the shell
	// between them may be gone.
	ClaudePID   int    `json:"claude_pid,omitempty"`
	ClaudeStart uint64 `json:"claude_start,omitempty"`
	// Truncated says the payload was cut at MaxPayload by the sender: it
	// is the payload's first MaxPayload bytes.
	Truncated bool `json:"truncated,omitempty"`
}

// Time returns At as a time.
func (h Header) Time() time.Time { return time.Unix(0, h.At) }

// HeaderFromEnv fills a header from this process's environment.
func HeaderFromEnv(kind string, start time.Time, getenv func(string) string) Header {
	return Header{
		Kind:    kind,
		At:      start.UnixNano(),
		PID:     os.Getpid(),
		PPID:    os.Getppid(),
		Session: getenv("CORRAL_SESSION"),
		Pane:    getenv("TMUX_PANE"),
		Tmux:    getenv("TMUX"),
	}
}

// Send delivers one payload to the agent's hook socket, giving up after
// timeout. A missing or dead agent is an error the caller may ignore.
//
// It uses the socket system calls directly rather than package net: a hook
// process lives for one delivery, and net's poller would cost more to set
// up than the delivery itself.
func Send(sock string, h Header, payload []byte, timeout time.Duration) error {
	hb, err := json.Marshal(h)
	if err != nil {
		return err
	}
	buf := make([]byte, 0, len(hb)+1+len(payload))
	buf = append(append(append(buf, hb...), '\n'), payload...)
	fd, err := socketCloexec()
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	// The timeout bounds connect (a full backlog) and every write (an agent
	// that stopped reading).
	tv := syscall.NsecToTimeval(timeout.Nanoseconds())
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv); err != nil {
		return err
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
		return &os.PathError{Op: "connect", Path: sock, Err: err}
	}
	deadline := time.Now().Add(timeout)
	for len(buf) > 0 {
		if time.Now().After(deadline) {
			return &os.PathError{Op: "write", Path: sock, Err: syscall.ETIMEDOUT}
		}
		n, err := syscall.Write(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "write", Path: sock, Err: err}
		}
		buf = buf[n:]
	}
	return syscall.Shutdown(fd, syscall.SHUT_WR)
}

// ReadStdin reads a payload, at most MaxPayload bytes; truncated reports a
// cut, and payload is then the first MaxPayload bytes.
func ReadStdin(r io.Reader) (payload []byte, truncated bool, err error) {
	payload, err = io.ReadAll(io.LimitReader(r, MaxPayload+1))
	if len(payload) > MaxPayload {
		return payload[:MaxPayload], true, err
	}
	return payload, false, err
}

// ErrTooLarge is returned by Read for a payload over the limit.
var ErrTooLarge = errors.New("hook payload too large")

// Read reads one delivery from a connection.
func Read(r io.Reader, maxPayload int) (Header, []byte, error) {
	br := bufio.NewReaderSize(r, 16<<10)
	line, err := readLine(br, MaxHeader)
	if err != nil {
		return Header{}, nil, fmt.Errorf("hook header: %w", err)
	}
	var h Header
	if err := json.Unmarshal(line, &h); err != nil {
		return Header{}, nil, fmt.Errorf("hook header: %w", err)
	}
	if h.Kind != KindHook && h.Kind != KindStatusLine {
		return h, nil, fmt.Errorf("hook header: unknown kind %q", h.Kind)
	}
	payload, err := io.ReadAll(io.LimitReader(br, int64(maxPayload)+1))
	if err != nil {
		return h, nil, fmt.Errorf("hook payload: %w", err)
	}
	if len(payload) > maxPayload {
		return h, nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, maxPayload)
	}
	return h, payload, nil
}

func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return nil, fmt.Errorf("header over %d bytes", max)
		}
		if err == nil {
			return bytes.TrimSuffix(line, []byte{'\n'}), nil
		}
		if err != bufio.ErrBufferFull {
			if err == io.EOF {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}
