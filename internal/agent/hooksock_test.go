package agent_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/hookwire"
)

// handlers counts the goroutines reading a hook delivery now.
func handlers() int {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "agent.(*hookListener).handleHookConn(")
}

// TestHookSocketBounds: a delivery over the size limit is not read beyond
// it; a cut one (the sender's Truncated flag) still reports its event; idle
// connections take at most the handlers' cap and the agent goes on serving;
// and warnings about bad deliveries are rate-limited.
func TestHookSocketBounds(t *testing.T) {
	r := newRig(t)
	s := r.shell("")

	// 8 MiB of a well-formed payload: refused after 1 MiB, nothing applied.
	seq := r.a.Bus().Seq()
	big := append([]byte(`{"session_id":"c1","hook_event_name":"UserPromptSubmit","prompt":"`), bytes.Repeat([]byte("x"), 8<<20)...)
	big = append(big, `"}`...)
	c, err := net.Dial("unix", r.hookSocket())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(20 * time.Second))
	n, werr := c.Write(rawDelivery(t, header(s.ID), big))
	c.Close()
	if werr == nil || n > 2<<20 {
		t.Fatalf("the agent took %d bytes of an 8 MiB delivery (write error %v), want at most about 1 MiB", n, werr)
	}
	// A good delivery after it is applied, so the big one, handled first
	// (one connection at a time here), published nothing.
	w := r.watch()
	cut := append([]byte(`{"session_id":"c1","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/x","content":"`),
		bytes.Repeat([]byte("y"), hookwire.MaxPayload)...)[:hookwire.MaxPayload]
	h := header(s.ID)
	h.Truncated = true
	r.sendHook(h, cut)
	ev := w.status(s.ID, api.StatusBusy)
	if got := ev.Seq - seq; got != 1 {
		t.Errorf("%d events for the oversized and the cut delivery, want 1 (the cut one)", got)
	}

	// 40 connections that send nothing: 32 are read at once, the rest wait.
	var idle []net.Conn
	for range 40 {
		c, err := net.Dial("unix", r.hookSocket())
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	deadline := time.Now().Add(10 * time.Second)
	for handlers() < 32 {
		if time.Now().After(deadline) {
			t.Fatalf("%d handlers for 40 idle connections, want 32", handlers())
		}
		time.Sleep(5 * time.Millisecond)
	}
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if n := handlers(); n > 32 {
			t.Fatalf("%d handlers at once, want at most 32", n)
		}
	}
	for _, c := range idle {
		c.Close()
	}
	r.sendHook(header(s.ID), payload{"session_id": "c1", "hook_event_name": "Stop", "last_assistant_message": "done"})
	w.status(s.ID, api.StatusReview)

	// 50 junk deliveries: a burst of warnings, then one a second.
	before := strings.Count(r.log.String(), "bad hook delivery")
	start := time.Now()
	for range 50 {
		r.deliverAndWait([]byte("junk\n"))
	}
	if got, most := strings.Count(r.log.String(), "bad hook delivery")-before, 10+int(time.Since(start).Seconds())+1; got > most {
		t.Errorf("%d warnings for 50 junk deliveries, want at most %d", got, most)
	}
}

// TestHookFromAnotherUser: a delivery from another user's process is
// refused even when the socket's mode would let it in (SO_PEERCRED).
func TestHookFromAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to run a process as another user")
	}
	r := newRig(t)
	s := r.shell("")
	// Let everyone reach the socket: the check must not rest on its mode.
	sock := r.hookSocket()
	for d := filepath.Dir(sock); d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for d := filepath.Dir(exe); d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	// The test binary runs `corral hook` (TestMain) as nobody.
	cmd := exec.Command(exe, "hook", "--data-dir", r.dataDir)
	cmd.Env = []string{"CORRAL_SESSION=" + s.ID, "PATH=/usr/bin:/bin", "HOME=/"}
	cmd.Stdin = strings.NewReader(`{"session_id":"c1","hook_event_name":"UserPromptSubmit","prompt":"from nobody"}`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	seq := r.a.Bus().Seq()
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run the test binary as nobody: %v %s", err, out.String())
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(r.log.String(), "hook delivery refused") {
		if got := r.a.Bus().Seq(); got != seq {
			t.Fatalf("a delivery from uid 65534 was applied (%d events)", got-seq)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no refusal logged; the hook said %q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(r.log.String(), fmt.Sprintf("uid %d", 65534)) {
		t.Errorf("the refusal does not name the uid:\n%s", r.log.String())
	}
	if got := r.a.Bus().Seq(); got != seq {
		t.Fatalf("a delivery from uid 65534 was applied (%d events)", got-seq)
	}
}
