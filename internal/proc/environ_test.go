//go:build linux

package proc

import (
	"errors"
	"os"
	"os/exec"
	"testing"
)

func TestGetenv(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.Env = []string{"A=1", "CORRAL_SESSION=abc", "B=x=y", "A=2"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
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
