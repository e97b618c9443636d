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
// is then never closed, so callers select on ctx.Done() as well.
func WatchExit(ctx context.Context, pid int) (<-chan struct{}, error) {
	return watchExit(ctx, pid, true, fallbackInterval)
}

func watchExit(ctx context.Context, pid int, usePidfd bool, interval time.Duration) (<-chan struct{}, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("proc: invalid pid %d", pid)
	}
	done := make(chan struct{})
	if usePidfd {
		f, err := openPidfd(pid)
		switch {
		case err == nil:
			go waitPidfd(ctx, f, pid, interval, done)
			return done, nil
		case errors.Is(err, unix.ESRCH):
			close(done)
			return done, nil
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
			// No pidfd here: poll below.
		default:
			return nil, fmt.Errorf("proc: pidfd_open %d: %w", pid, err)
		}
	}
	st, err := readStat(pid)
	if errors.Is(err, ErrNoProcess) || (err == nil && st.state == "Z") {
		close(done)
		return done, nil
	}
	if err != nil {
		return nil, err
	}
	go pollExit(ctx, pid, st.startTime, interval, done)
	return done, nil
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

func waitPidfd(ctx context.Context, f *os.File, pid int, interval time.Duration, done chan struct{}) {
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
		close(done)
	case ctx.Err() != nil:
	default:
		// The descriptor could not be polled (should not happen on a
		// kernel with pidfd); keep the promise by polling instead.
		st, serr := readStat(pid)
		if serr != nil || st.state == "Z" {
			close(done)
			return
		}
		pollExit(ctx, pid, st.startTime, interval, done)
	}
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
// turns zombie, or shows another start time (the pid was reused).
func pollExit(ctx context.Context, pid int, start uint64, interval time.Duration, done chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := readStat(pid)
		if err != nil || st.state == "Z" || st.startTime != start {
			close(done)
			return
		}
	}
}
