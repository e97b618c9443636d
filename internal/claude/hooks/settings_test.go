package hooks

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/shellquote"
)

func TestSettingsJSON(t *testing.T) {
	hook := Exec{Path: "/opt/my tools/corral-hook", Args: []string{"--data-dir", "/d y"}}
	status := shellquote.Join("/opt/my tools/corral", "statusline")
	b, err := SettingsJSON(hook, status)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks map[string][]struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Type    string   `json:"type"`
				Command string   `json:"command"`
				Args    []string `json:"args"`
				Timeout int      `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
		StatusLine map[string]any `json:"statusLine"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	var events []string
	for ev, groups := range s.Hooks {
		events = append(events, ev)
		if len(groups) != 1 || len(groups[0].Hooks) != 1 {
			t.Fatalf("%s: %+v", ev, groups)
		}
		h := groups[0].Hooks[0]
		// Exec form: the program and its arguments as given, no shell.
		if h.Type != "command" || h.Command != hook.Path || !slices.Equal(h.Args, append(hook.Args, OwnArg)) || h.Timeout != TimeoutSeconds || !IsOwnHook(h.Command, h.Args) {
			t.Errorf("%s: %+v", ev, h)
		}
		if m := groups[0].Matcher; isToolEvent(ev) != (m != nil && *m == "*") {
			t.Errorf("%s: matcher %v", ev, m)
		}
	}
	slices.Sort(events)
	want := Events()
	slices.Sort(want)
	if !slices.Equal(events, want) {
		t.Fatalf("events %v", events)
	}
	if s.StatusLine["type"] != "command" || s.StatusLine["command"] != status+" "+OwnMarker || s.StatusLine["padding"] != 0.0 {
		t.Fatalf("statusLine %v", s.StatusLine)
	}
	// The status line is a shell command, stored as the shell will see it:
	// quoting survives, and HTML-ish characters are not escaped.
	if !strings.Contains(string(b), `"'/opt/my tools/corral' statusline #corral-managed"`) {
		t.Fatalf("command text not verbatim:\n%s", b)
	}

	b, err = SettingsJSON(Exec{Path: "/x/corral-hook", Args: []string{"x < y"}}, "")
	if err != nil || strings.Contains(string(b), "statusLine") || !strings.Contains(string(b), "x < y") {
		t.Fatalf("no statusLine: %s %v", b, err)
	}
	for _, bad := range []struct {
		hook   Exec
		status string
	}{{Exec{}, "s"}, {Exec{Path: "rel/corral-hook"}, "s"}, {Exec{Path: "/a\nb"}, "s"}, {Exec{Path: "/a"}, "b\x00"}} {
		if _, err := SettingsJSON(bad.hook, bad.status); err == nil {
			t.Errorf("SettingsJSON(%+v, %q) succeeded", bad.hook, bad.status)
		}
	}
}

func TestOwnHooks(t *testing.T) {
	cases := []struct {
		command string
		args    []string
		own     bool
	}{
		{"/usr/local/bin/corral-hook", []string{"--data-dir", "/d"}, true},
		{"/moved/corral-hook", []string{"x"}, true},
		{"/usr/bin/corral", []string{"hook", "--data-dir", "/d"}, true},
		{"/usr/bin/corral", []string{"serve"}, false},
		{"/usr/bin/other-hook", []string{"--data-dir"}, false},
		{"/renamed/anything", []string{"--data-dir", "/d", OwnArg}, true},
		{"/usr/local/bin/corral hook #corral-managed", nil, true}, // the old shell form
		{"notify-send done", nil, false},
	}
	for _, c := range cases {
		if got := IsOwnHook(c.command, c.args); got != c.own {
			t.Errorf("IsOwnHook(%q, %q) = %v", c.command, c.args, got)
		}
	}
}

func TestOwnCommands(t *testing.T) {
	cases := map[string]bool{
		"/usr/local/bin/corral hook #corral-managed": true,
		"'/moved/elsewhere/cx' hook #corral-managed": true,
		"corral hook":                      true,
		"/home/u/go/bin/corral statusline": true,
		`"/path with space/corral" hook`:   true,
		"corral serve":                     false,
		"corral":                           false,
		"/home/dev/hook.sh":                false,
		"echo corral hook":                 false,
		"notcorral hook":                   false,
		"~/.claude/statusline.sh # corral-statusline?": false,
	}
	for cmd, want := range cases {
		if got := IsOwnCommand(cmd); got != want {
			t.Errorf("IsOwnCommand(%q) = %v", cmd, got)
		}
	}
	if MarkCommand("x #corral-managed") != "x #corral-managed" || MarkCommand(" x ") != "x #corral-managed" {
		t.Fatal("MarkCommand not idempotent")
	}
}
