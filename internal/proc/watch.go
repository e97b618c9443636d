//go:build linux

package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// fallbackInterval is how often WatchExit polls when the kernel has no
// pidfd_open (Linux < 5.3) or a sandbox forbids it.
const fallbackInterval = 10 * time.Second

// WatchExit returns a channel that is closed when process pid exits. The
// process need not be our child; a zombie counts as exited. A pid that does
// not exist (already gone) gives an already-closed channel, so a process
// that dies between being listed and being watched is no special case.
//
// It uses a pidfd registered with Go's netpoller: a watch costs one file
// descriptor and one parked goroutine, not an OS thread, so watching
// hundreds of processes is cheap. Without pidfd support it polls every 10 s
// (comparing start times, so a reused pid still reads as an exit).
//
// Cancelling ctx stops the watch and releases the descriptor; the channel
// is then never closed, so callers select on ctx.Done() as well. The
// watch's goroutine is WatchExit's own: an owner that waits for its
// goroutines uses OpenExit and waits on its own goroutine instead.
func WatchExit(ctx context.Context, pid int) (<-chan struct{}, error) {
	return watchExit(ctx, pid, true, fallbackInterval)
}

func watchExit(ctx context.Context, pid int, usePidfd bool, interval time.Duration) (<-chan struct{}, error) {
	e, err := openExit(pid, usePidfd, interval)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	if e.gone {
		close(done)
		return done, nil
	}
	go func() {
		if e.Wait(ctx) {
			close(done)
		}
	}()
	return done, nil
}

// Exit is an open watch of one process's exit (OpenExit), which Wait waits
// on. It holds a pidfd until Wait returns.
type Exit struct {
	pid      int
	f        *os.File // the pidfd; nil when polling
	start    uint64   // the start time, when polling
	gone     bool     // already exited when opened
	interval time.Duration
}

// OpenExit opens a watch of process pid's exit (see WatchExit): a pidfd, or
// without pidfd support the process's start time to poll. A pid that does
// not exist gives a watch that has already seen the exit.
func OpenExit(pid int) (*Exit, error) {
	return openExit(pid, true, fallbackInterval)
}

func openExit(pid int, usePidfd bool, interval time.Duration) (*Exit, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("proc: invalid pid %d", pid)
	}
	e := &Exit{pid: pid, interval: interval}
	if usePidfd {
		f, err := openPidfd(pid)
		switch {
		case err == nil:
			e.f = f
			return e, nil
		case errors.Is(err, unix.ESRCH):
			e.gone = true
			return e, nil
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
			// No pidfd here: poll below.
		default:
			return nil, fmt.Errorf("proc: pidfd_open %d: %w", pid, err)
		}
	}
	st, err := readStat(pid)
	if errors.Is(err, ErrNoProcess) || (err == nil && st.state == "Z") {
		e.gone = true
		return e, nil
	}
	if err != nil {
		return nil, err
	}
	e.start = st.startTime
	return e, nil
}

// Wait blocks until the process exits (true) or ctx ends (false), on the
// caller's goroutine, and releases the descriptor. Call it once.
func (e *Exit) Wait(ctx context.Context) bool {
	switch {
	case e.gone:
		return true
	case e.f != nil:
		return waitPidfd(ctx, e.f, e.pid, e.interval)
	}
	return pollExit(ctx, e.pid, e.start, e.interval)
}

// openPidfd opens a non-blocking pidfd; os.NewFile then registers a
// non-blocking descriptor with the netpoller.
func openPidfd(pid int) (*os.File, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "pidfd:"+strconv.Itoa(pid)), nil
}

func waitPidfd(ctx context.Context, f *os.File, pid int, interval time.Duration) bool {
	defer f.Close()
	// A deadline in the past wakes the parked Read below.
	stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Now()) })
	defer stop()
	rc, err := f.SyscallConn()
	exited := false
	if err == nil {
		// The callback runs when the poller says readable (and once at
		// first); a pidfd is readable exactly when the process has exited.
		// Its error is that of a closed file (ctx ended): exited says all.
		_ = rc.Read(func(fd uintptr) bool {
			exited = pidfdReadable(int(fd))
			return exited
		})
	}
	switch {
	case exited:
		return true
	case ctx.Err() != nil:
		return false
	}
	// The descriptor could not be polled (should not happen on a kernel
	// with pidfd); keep the promise by polling instead.
	st, serr := readStat(pid)
	if serr != nil || st.state == "Z" {
		return true
	}
	return pollExit(ctx, pid, st.startTime, interval)
}

func pidfdReadable(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n > 0 && fds[0].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0
	}
}

// pollExit is the fallback: the process is gone when its stat vanishes,
// turns zombie, or shows another start time (the pid was reused). It
// reports whether it saw the exit before ctx ended.
func pollExit(ctx context.Context, pid int, start uint64, interval time.Duration) bool {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		st, err := readStat(pid)
		if err != nil || st.state == "Z" || st.startTime != start {
			return true
		}
	}
}
