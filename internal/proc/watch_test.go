//go:build linux

package proc

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no exit notice", what)
	}
}

func TestWatchExitChild(t *testing.T) {
	for _, pidfd := range []bool{true, false} {
		t.Run("pidfd="+strconv.FormatBool(pidfd), func(t *testing.T) {
			c := startSleep(t)
			ch, err := watchExit(t.Context(), c.Process.Pid, pidfd, 10*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if isClosed(ch) {
				t.Fatal("closed while the process runs")
			}
			// Not reaped yet: a zombie counts as exited.
			c.Process.Signal(syscall.SIGKILL)
			waitClosed(t, ch, "killed child")
		})
	}
}

// The watched process is not our child: its parent shell has exited and
// it was reparented.
func TestWatchExitNotOurChild(t *testing.T) {
	out, err := exec.Command("sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if p := settled(t, pid, func(p Proc) bool { return p.Comm == "sleep" }); p.PPID == os.Getpid() {
		t.Fatalf("orphan: %+v", p)
	}
	ch, err := WatchExit(t.Context(), pid)
	if err != nil {
		t.Fatal(err)
	}
	if isClosed(ch) {
		t.Fatal("closed while the process runs")
	}
	syscall.Kill(pid, syscall.SIGKILL)
	waitClosed(t, ch, "orphan")
}

func TestWatchExitAlreadyGone(t *testing.T) {
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	defer zombie.Wait()
	waitFor(t, 5*time.Second, func() (bool, string) {
		p, err := Stat(zombie.Process.Pid)
		return err == nil && p.State == "Z", spew(p, err)
	})
	for _, pidfd := range []bool{true, false} {
		for name, pid := range map[string]int{"reaped": deadPID(t), "zombie": zombie.Process.Pid} {
			ch, err := watchExit(t.Context(), pid, pidfd, time.Hour)
			if err != nil {
				t.Fatalf("%s pidfd=%v: %v", name, pidfd, err)
			}
			waitClosed(t, ch, name)
		}
	}
	for _, pid := range []int{0, -5} {
		if _, err := WatchExit(t.Context(), pid); err == nil {
			t.Errorf("WatchExit(%d) gave no error", pid)
		}
	}
}

// The fallback poll treats a changed start time as an exit (pid reuse).
func TestPollExitPidReuse(t *testing.T) {
	c := startSleep(t)
	p, err := Stat(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		if pollExit(t.Context(), p.PID, p.StartTime+1, 10*time.Millisecond) {
			close(done)
		}
	}()
	waitClosed(t, done, "reused pid")
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func TestWatchExitCancelReleasesFD(t *testing.T) {
	c := startSleep(t)
	before := openFDs(t)
	ctx, cancel := context.WithCancel(t.Context())
	var chans []<-chan struct{}
	for range 10 {
		ch, err := WatchExit(ctx, c.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, ch)
	}
	if n := openFDs(t); n < before+10 {
		t.Fatalf("fds %d -> %d: want one pidfd per watch", before, n)
	}
	cancel()
	waitFor(t, 5*time.Second, func() (bool, string) {
		n := openFDs(t)
		return n <= before, strconv.Itoa(n) + " fds open, want " + strconv.Itoa(before)
	})
	for _, ch := range chans {
		if isClosed(ch) {
			t.Error("channel closed by cancel")
		}
	}
}

func threadCount(t *testing.T) int {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Threads:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no Threads: line")
	return 0
}

// goroutinesInIOWait counts goroutines parked in the netpoller.
func goroutinesInIOWait() int {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "[IO wait")
}

// TestWatchExitManyCheap watches 100 processes and checks that the watches
// park in the netpoller rather than in blocking syscalls (which would hold
// an OS thread each), then that every exit is reported.
func TestWatchExitManyCheap(t *testing.T) {
	const n = 100
	var cmds []*exec.Cmd
	for range n {
		cmds = append(cmds, startSleep(t))
	}
	threadsBefore := threadCount(t)
	ioWaitBefore := goroutinesInIOWait()
	var chans []<-chan struct{}
	for _, c := range cmds {
		ch, err := WatchExit(t.Context(), c.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, ch)
	}
	waitFor(t, 10*time.Second, func() (bool, string) {
		got := goroutinesInIOWait() - ioWaitBefore
		return got >= n, strconv.Itoa(got) + " watches parked in the netpoller"
	})
	threadsAfter := threadCount(t)
	t.Logf("threads: %d before, %d while watching %d processes", threadsBefore, threadsAfter, n)
	if threadsAfter > threadsBefore+10 {
		t.Errorf("threads grew from %d to %d for %d watches", threadsBefore, threadsAfter, n)
	}
	for i, ch := range chans {
		if isClosed(ch) {
			t.Fatalf("watch %d closed early", i)
		}
	}
	for _, c := range cmds {
		c.Process.Signal(syscall.SIGKILL)
	}
	for _, ch := range chans {
		waitClosed(t, ch, "one of many")
	}
}

func BenchmarkWatchExit(b *testing.B) {
	c := startSleep(b)
	for b.Loop() {
		ctx, cancel := context.WithCancel(b.Context())
		if _, err := WatchExit(ctx, c.Process.Pid); err != nil {
			b.Fatal(err)
		}
		cancel()
	}
}
