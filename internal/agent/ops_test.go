package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

func TestSendTextAndKeys(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.shell("")
	ctx := ctxT(t)

	if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}, Text: "echo typed-$((6*7))", Enter: true}); err != nil {
		t.Fatal(err)
	}
	r.waitScreen(s.ID, "typed-42")

	// Text without Enter, then Enter as a key.
	if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}, Text: "echo keyed-$((7*7))"}); err != nil {
		t.Fatal(err)
	}
	if err := r.a.SendKeys(ctx, api.KeysRequest{SessionRef: api.SessionRef{ID: s.ID}, Keys: []string{"Enter"}}); err != nil {
		t.Fatal(err)
	}
	r.waitScreen(s.ID, "keyed-49")

	// Text that tmux or a shell would interpret arrives literally.
	tricky := `echo 'semi;colon #{pane_id} $HOME \;'`
	if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}, Text: tricky, Enter: true}); err != nil {
		t.Fatal(err)
	}
	r.waitScreen(s.ID, `semi;colon #{pane_id} $HOME \;`)

	// Enter alone is allowed.
	if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}, Enter: true}); err != nil {
		t.Errorf("Enter alone: %v", err)
	}

	bad := []struct {
		name string
		err  error
	}{
		{"nothing", r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}})},
		{"invalid UTF-8", r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}, Text: "a\xffb"})},
		{"unknown key", r.a.SendKeys(ctx, api.KeysRequest{SessionRef: api.SessionRef{ID: s.ID}, Keys: []string{"NotAKey"}})},
		{"empty key", r.a.SendKeys(ctx, api.KeysRequest{SessionRef: api.SessionRef{ID: s.ID}, Keys: []string{""}})},
		{"key with a separator", r.a.SendKeys(ctx, api.KeysRequest{SessionRef: api.SessionRef{ID: s.ID}, Keys: []string{"Enter;"}})},
		{"two characters", r.a.SendKeys(ctx, api.KeysRequest{SessionRef: api.SessionRef{ID: s.ID}, Keys: []string{"ab"}})},
		{"dangling modifier", r.a.SendKeys(ctx, api.KeysRequest{SessionRef: api.SessionRef{ID: s.ID}, Keys: []string{"C-"}})},
		{"too many keys", r.a.SendKeys(ctx, api.KeysRequest{SessionRef: api.SessionRef{ID: s.ID}, Keys: make201Keys()})},
		{"valid then invalid", r.a.SendKeys(ctx, api.KeysRequest{SessionRef: api.SessionRef{ID: s.ID}, Keys: []string{"a", "Bogus"}})},
	}
	for _, b := range bad {
		if !errors.Is(b.err, api.ErrBadRequest) {
			t.Errorf("%s: %v, want bad_request", b.name, b.err)
		}
	}
	if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: "nosuchsession"}, Text: "x"}); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("SendText to an unknown session: %v", err)
	}
	if err := r.a.SendKeys(ctx, api.KeysRequest{SessionRef: api.SessionRef{ID: "nosuchsession"}, Keys: []string{"Enter"}}); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("SendKeys to an unknown session: %v", err)
	}
	if err := r.a.Viewed(ctx, api.SessionRef{ID: "nosuchsession"}); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("Viewed of an unknown session: %v", err)
	}
	// A refused "valid then invalid" sends nothing at all: "a" never shows.
	if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}, Text: "echo after-refusal", Enter: true}); err != nil {
		t.Fatal(err)
	}
	scr := r.waitScreen(s.ID, "after-refusal\n")
	if strings.Contains(scr, "aecho after-refusal") {
		t.Errorf("a key of a refused request reached the pane:\n%s", scr)
	}
}

func make201Keys() []string {
	k := make([]string, 201)
	for i := range k {
		k[i] = "a"
	}
	return k
}

func TestCapture(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := ctxT(t)
	s, err := r.a.Create(ctx, api.CreateRequest{Dir: r.proj, Shell: true, Cols: 70, Rows: 20})
	if err != nil {
		t.Fatal(err)
	}
	// Text typed before the shell's first prompt is echoed ahead of it
	// ("seq 1 60\n$ 1"), and the checks below read lines.
	r.waitScreen(s.ID, "$")
	if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}, Text: "seq 1 60", Enter: true}); err != nil {
		t.Fatal(err)
	}
	r.waitScreen(s.ID, "60\n$")
	vis, err := r.a.Capture(ctx, api.CaptureRequest{SessionRef: api.SessionRef{ID: s.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(vis.Text, "\n1\n2\n3\n") {
		t.Errorf("visible capture holds lines that scrolled off:\n%s", vis.Text)
	}
	hist, err := r.a.Capture(ctx, api.CaptureRequest{SessionRef: api.SessionRef{ID: s.ID}, History: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(hist.Text, "\n1\n2\n3\n") {
		t.Errorf("capture with history does not hold the scrolled-off output:\n%s", hist.Text)
	}

	if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}, Text: "clear", Enter: true}); err != nil {
		t.Fatal(err)
	}
	// After clear the prompt is on the first row; type after it.
	var scr api.Screen
	waitUntil(t, 10*time.Second, "a cleared screen", func() bool {
		scr, err = r.a.Capture(ctx, api.CaptureRequest{SessionRef: api.SessionRef{ID: s.ID}})
		return err == nil && strings.HasPrefix(scr.Text, "$") && strings.TrimSpace(scr.Text) == "$"
	})
	if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}, Text: "abc"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "typed abc", func() bool {
		scr, err = r.a.Capture(ctx, api.CaptureRequest{SessionRef: api.SessionRef{ID: s.ID}})
		return err == nil && strings.HasPrefix(scr.Text, "$ abc")
	})
	if scr.Cols != 70 || scr.Rows != 20 {
		t.Errorf("screen size %dx%d, want 70x20", scr.Cols, scr.Rows)
	}
	if scr.Cursor != [2]int{len("$ abc"), 0} {
		t.Errorf("cursor %v, want [5 0] after %q", scr.Cursor, "$ abc")
	}
	if n := strings.Count(scr.Text, "\n"); n != 20 {
		t.Errorf("visible capture has %d lines, want 20:\n%s", n, scr.Text)
	}

	if _, err := r.a.Capture(ctx, api.CaptureRequest{SessionRef: api.SessionRef{ID: "nosuchsession"}}); !errors.Is(err, api.ErrNotFound) {
		t.Errorf("Capture of an unknown session: %v", err)
	}
}

func TestRun(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.shell("")
	ctx := ctxT(t)

	t.Run("output and exit code", func(t *testing.T) {
		res, err := r.a.Run(ctx, api.RunRequest{SessionRef: api.SessionRef{ID: s.ID}, Argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 3 || res.Output != "out\nerr\n" || res.Truncated {
			t.Errorf("Run = %+v, want exit 3 and out+err", res)
		}
	})
	t.Run("arguments are not parsed by a shell", func(t *testing.T) {
		res, err := r.a.Run(ctx, api.RunRequest{SessionRef: api.SessionRef{ID: s.ID}, Argv: []string{"printf", "%s|", "a b", "$HOME", "; rm -rf /"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Output != "a b|$HOME|; rm -rf /|" {
			t.Errorf("Run output %q", res.Output)
		}
	})
	t.Run("environment", func(t *testing.T) {
		res, err := r.a.Run(ctx, api.RunRequest{SessionRef: api.SessionRef{ID: s.ID}, Argv: []string{"sh", "-c", `echo "$CORRAL_SESSION|$HOME|${TMUX-unset}"`}})
		if err != nil {
			t.Fatal(err)
		}
		if want := s.ID + "|" + r.home + "|unset\n"; res.Output != want {
			t.Errorf("Run output %q, want %q", res.Output, want)
		}
	})
	t.Run("stdin is empty", func(t *testing.T) {
		res, err := r.a.Run(ctx, api.RunRequest{SessionRef: api.SessionRef{ID: s.ID}, Argv: []string{"cat"}, TimeoutMS: 5000})
		if err != nil || res.ExitCode != 0 || res.Output != "" {
			t.Errorf("cat: %+v, %v; want it to end at once with no output", res, err)
		}
	})
	t.Run("command not found", func(t *testing.T) {
		res, err := r.a.Run(ctx, api.RunRequest{SessionRef: api.SessionRef{ID: s.ID}, Argv: []string{"no-such-command-xyz"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 127 || !strings.Contains(res.Output, "no-such-command-xyz") {
			t.Errorf("Run of a missing command = %+v, want exit 127", res)
		}
	})
	t.Run("killed by a signal", func(t *testing.T) {
		res, err := r.a.Run(ctx, api.RunRequest{SessionRef: api.SessionRef{ID: s.ID}, Argv: []string{"sh", "-c", "kill -TERM $$"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 128+15 {
			t.Errorf("exit code %d, want 143", res.ExitCode)
		}
	})
	t.Run("output is capped", func(t *testing.T) {
		res, err := r.a.Run(ctx, api.RunRequest{SessionRef: api.SessionRef{ID: s.ID}, Argv: []string{"head", "-c", "3000000", "/dev/zero"}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || len(res.Output) != 256<<10 || res.ExitCode != 0 {
			t.Errorf("Run of 3 MB: truncated %v, %d bytes, exit %d; want truncated at 1 MiB", res.Truncated, len(res.Output), res.ExitCode)
		}
	})
	t.Run("timeout kills the process group", func(t *testing.T) {
		start := time.Now()
		res, err := r.a.Run(ctx, api.RunRequest{SessionRef: api.SessionRef{ID: s.ID}, Argv: []string{"sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!; sleep 60"},
			TimeoutMS: 300})
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("Run with a 300 ms timeout took %v", took)
		}
		if res.ExitCode != 124 || !strings.Contains(res.Output, "timed out") {
			t.Errorf("Run = %+v, want exit 124 and a timeout note", res)
		}
		pid, err := strconv.Atoi(strings.SplitN(res.Output, "\n", 2)[0])
		if err != nil {
			t.Fatalf("no child pid in %q", res.Output)
		}
		waitUntil(t, 5*time.Second, "the background child to die", func() bool { return !alive(pid) })
	})
	t.Run("a background child keeps the output open", func(t *testing.T) {
		// `cmd &`: the shell exits at once, its child holds the pipe. What
		// was written comes back, and the wait is bounded.
		for _, c := range []struct {
			script string
			code   int
		}{
			{"echo before; sleep 30 & echo $!; echo after", 0},
			{"echo before; sleep 30 & echo $!; echo after; exit 4", 4},
		} {
			start := time.Now()
			res, err := r.a.Run(ctx, api.RunRequest{SessionRef: api.SessionRef{ID: s.ID}, Argv: []string{"sh", "-c", c.script}})
			if err != nil {
				t.Fatalf("%s: %v", c.script, err)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("%s: took %v", c.script, took)
			}
			lines := strings.Split(res.Output, "\n")
			if len(lines) < 3 || res.ExitCode != c.code || lines[0] != "before" || lines[2] != "after" {
				t.Fatalf("%s: %+v, want exit %d and its output", c.script, res, c.code)
			}
			// The child runs on, as `cmd &` asked; the test ends it.
			if pid, err := strconv.Atoi(lines[1]); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			if c.code == 0 && !strings.Contains(res.Output, "keeps its output open") {
				t.Errorf("%s: no note on the output cut short: %q", c.script, res.Output)
			}
		}
	})
	t.Run("bad requests", func(t *testing.T) {
		for _, argv := range [][]string{nil, {}, {""}} {
			if _, err := r.a.Run(ctx, api.RunRequest{SessionRef: api.SessionRef{ID: s.ID}, Argv: argv}); !errors.Is(err, api.ErrBadRequest) {
				t.Errorf("Run(%q): %v, want bad_request", argv, err)
			}
		}
		if _, err := r.a.Run(ctx, api.RunRequest{SessionRef: api.SessionRef{ID: "nosuchsession"}, Argv: []string{"true"}}); !errors.Is(err, api.ErrNotFound) {
			t.Errorf("Run in an unknown session: %v, want not found", err)
		}
	})
}

func TestRunFollowsThePaneDirectory(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.shell("")
	ctx := ctxT(t)
	sub := filepath.Join(r.proj, "sub dir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := r.a.Run(ctx, api.RunRequest{SessionRef: api.SessionRef{ID: s.ID}, Argv: []string{"pwd"}})
	if err != nil || res.Output != r.proj+"\n" {
		t.Fatalf("pwd before cd: %+v %v, want %s", res, err, r.proj)
	}
	if err := r.a.SendText(ctx, api.InputRequest{SessionRef: api.SessionRef{ID: s.ID}, Text: "cd 'sub dir'", Enter: true}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the pane to be in "+sub, func() bool {
		res, err = r.a.Run(ctx, api.RunRequest{SessionRef: api.SessionRef{ID: s.ID}, Argv: []string{"pwd"}})
		return err == nil && res.Output == sub+"\n"
	})
}

func TestRunRelativeCommandPath(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	s := r.shell("")
	if err := os.WriteFile(filepath.Join(r.proj, "hello.sh"), []byte("#!/bin/sh\necho hello from $(pwd)\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := r.a.Run(ctxT(t), api.RunRequest{SessionRef: api.SessionRef{ID: s.ID}, Argv: []string{"./hello.sh"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Output != "hello from "+r.proj+"\n" {
		t.Errorf("Run(./hello.sh) = %+v, want the script's output", res)
	}
}
