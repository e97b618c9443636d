//go:build linux

package proc

import (
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestGetenv(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.Env = []string{"A=1", "CORRAL_SESSION=abc", "B=x=y", "A=2"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	// Start returns once the child has begun execve, but the kernel sets
	// the new environment's bounds a moment later; until then
	// /proc/<pid>/environ reads empty. Wait for it, with a deadline.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, ok, err := Getenv(cmd.Process.Pid, "CORRAL_SESSION"); err != nil || ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child's environment never appeared")
		}
	}
	for key, want := range map[string]string{"CORRAL_SESSION": "abc", "B": "x=y", "A": "2"} {
		if v, ok, err := Getenv(cmd.Process.Pid, key); err != nil || !ok || v != want {
			t.Errorf("Getenv(%s) = %q, %v, %v; want %q", key, v, ok, err, want)
		}
	}
	if _, ok, err := Getenv(cmd.Process.Pid, "CORRAL"); ok || err != nil {
		t.Errorf("a prefix of a key matched: %v, %v", ok, err)
	}
	if _, _, err := Getenv(1<<30, "A"); !errors.Is(err, ErrNoProcess) {
		t.Errorf("missing process: %v", err)
	}
	if _, ok, err := Getenv(os.Getpid(), "NO_SUCH_VARIABLE_HERE"); ok || err != nil {
		t.Errorf("self: %v, %v", ok, err)
	}
}
