package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/client"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// TestHubRunsInItsSandbox runs `corral hub` as the hub's systemd unit
// confines it, as far as that can be done without systemd: a read-only
// root but for the data directory (ProtectSystem=strict, ReadWritePaths),
// empty /home, /root and /tmp (ProtectHome, PrivateTmp), no capabilities
// and no new privileges (CapabilityBoundingSet=, NoNewPrivileges), an
// account of its own (User=). An agent then joins it and a session shows
// through it. The mounts live in a mount namespace of the test's own.
// The system-call filter and the /proc and address-family settings need
// systemd itself; systemd-analyze checks how they are written.
func TestHubRunsInItsSandbox(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("needs root on Linux (mount namespaces)")
	}
	for _, tool := range []string{"unshare", "setpriv", "tmux"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)

	// Outside /tmp, which the sandbox hides: the binary and the data.
	base, err := os.MkdirTemp("/var/tmp", "corral-sandbox-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	exe := filepath.Join(base, "corral")
	copyFile(t, testExe(t), exe)
	data := filepath.Join(base, "data")
	os.Mkdir(data, 0o700)
	if err := os.Chown(data, uid, gid); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	script := `set -e
mount --make-rprivate /
mount --bind "$DATA" "$DATA"
mount --bind / / && mount -o remount,bind,ro /
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs tmpfs /home
mount -t tmpfs tmpfs /root
exec setpriv --reuid="$RUID" --regid="$RGID" --clear-groups --no-new-privs --bounding-set=-all --inh-caps=-all \
  env -i HOME=/nonexistent PATH=/usr/bin:/bin ` + mainEnv + `=1 GORACE=atexit_sleep_ms=0 "$EXE" --data-dir "$DATA" hub --listen "$ADDR"`
	hub := exec.Command("unshare", "--mount", "sh", "-c", script)
	hub.Env = []string{"PATH=" + os.Getenv("PATH"), "DATA=" + data, "EXE=" + exe, "ADDR=" + addr,
		"RUID=" + nobody.Uid, "RGID=" + nobody.Gid}
	log := &testio.SyncBuffer{}
	hub.Stdout, hub.Stderr = log, log
	if err := hub.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func(c *exec.Cmd) {
		c.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			c.Process.Kill()
			<-done
		}
	}
	t.Cleanup(func() {
		stop(hub)
		if t.Failed() {
			t.Logf("hub log:\n%s", log.String())
		}
	})
	baseURL := "http://" + addr
	waitFor(t, 15*time.Second, "the sandboxed hub to answer", func() bool {
		resp, err := http.Get(baseURL + "/")
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == 200
	})

	// Its users and devices, while it runs, as its own account would.
	admin := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("setpriv", append([]string{"--reuid=" + nobody.Uid, "--regid=" + nobody.Gid, "--clear-groups",
			exe, "--data-dir", data}, args...)...)
		cmd.Env = []string{"HOME=/nonexistent", "PATH=/usr/bin:/bin", mainEnv + "=1", "GORACE=atexit_sleep_ms=0"}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("corral %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	userTok := admin("hub", "user", "add", "alice")
	devTok := admin("hub", "device", "add", "box", "--user", "alice")

	// An agent, outside the sandbox, joins it; its session shows through it.
	in := newInstall(t)
	in.env = map[string]string{"CORRAL_DEVICE_TOKEN": devTok}
	agent := exec.Command(testExe(t), "agent", "--hub", baseURL, "--log-level", "debug")
	agent.Env = in.environ()
	agent.Dir = in.proj
	agent.Stdout, agent.Stderr = in.log, in.log
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop(agent)
		exec.Command("tmux", "-S", datadir.Socket(in.dataDir, datadir.TmuxSocket), "kill-server").Run()
		if t.Failed() {
			t.Logf("agent log:\n%s", in.log.String())
		}
	})
	waitFor(t, 15*time.Second, "the agent's socket", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := in.c.Version(ctx)
		return err == nil
	})
	id := in.shell("through-the-hub")
	hc := client.HTTP(baseURL, userTok)
	waitFor(t, 15*time.Second, "the session to show through the hub", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		list, err := hc.Sessions(ctx)
		if err != nil {
			return false
		}
		for _, s := range list {
			if s.ID == id {
				return true
			}
		}
		return false
	})
	// A backup of the hub's database while it runs.
	if out := admin("backup", data); !strings.Contains(out, "backed up") {
		t.Errorf("backup of the sandboxed hub: %s", out)
	}
	if strings.Contains(log.String(), "level=ERROR") {
		t.Errorf("the sandboxed hub logged errors:\n%s", log.String())
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
