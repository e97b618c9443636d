package claude

import (
	"strings"
	"testing"
)

func TestDangerousArgs(t *testing.T) {
	inside := func(d string) bool { return d == "/srv/app" || d == "lib" || strings.HasPrefix(d, "/srv/app/") }
	safe := [][]string{
		nil,
		{"fix the tests"},
		{"--model", "opus", "--effort", "high", "explain this"},
		{"--model=sonnet"},
		{"-c"},
		{"-n", "review", "--verbose"},
		{"--append-system-prompt", "be brief", "--fork-session"},
		{"--permission-mode", "plan"},
		{"--permission-mode=dontAsk"},
		{"--add-dir", "/srv/app/lib", "lib"},
		{"--add-dir=/srv/app"},
		{"--disallowedTools", "Bash", "Edit", "--", "go on"},
		{"-d", "api,hooks"},
		{"-cd"},
		{"-dp"}, // -d takes the rest of the cluster as its filter: "p"
		// A value is a value, even one that looks like an option.
		{"--model", "--dangerously-skip-permissions"},
		{"--system-prompt", "-p"},
		{"doctor the code"}, // a prompt, not the subcommand
		{"please", "doctor"},
		{"-"},
	}
	for _, args := range safe {
		if d := DangerousArgs(args, inside); len(d) != 0 {
			t.Errorf("%q: %v, want safe", args, d)
		}
	}
	dangerous := []struct {
		args []string
		want string // the Arg of the first danger
	}{
		{[]string{"--dangerously-skip-permissions"}, "--dangerously-skip-permissions"},
		{[]string{"--dangerously-skip-permissions=true"}, "--dangerously-skip-permissions"},
		{[]string{"--allow-dangerously-skip-permissions"}, "--allow-dangerously-skip-permissions"},
		{[]string{"--permission-mode", "bypassPermissions"}, "--permission-mode bypassPermissions"},
		{[]string{"--permission-mode=acceptEdits"}, "--permission-mode acceptEdits"},
		{[]string{"--permission-mode", "auto"}, "--permission-mode auto"},
		{[]string{"--permission-mode"}, "--permission-mode"},
		{[]string{"--allowedTools", "Bash(*)"}, "--allowedTools"},
		{[]string{"--allowed-tools=Bash"}, "--allowed-tools"},
		{[]string{"--tools", "default"}, "--tools"},
		{[]string{"--add-dir", "/etc"}, "--add-dir /etc"},
		{[]string{"--add-dir", "/srv/app", "/"}, "--add-dir /"},
		{[]string{"--add-dir=/srv/application"}, "--add-dir /srv/application"},
		{[]string{"--settings", `{"hooks":{}}`}, "--settings"},
		{[]string{"--setting-sources", "project"}, "--setting-sources"},
		{[]string{"--mcp-config", "evil.json"}, "--mcp-config"},
		{[]string{"--agents", "{}"}, "--agents"},
		{[]string{"--plugin-url", "https://evil/x.zip"}, "--plugin-url"},
		{[]string{"--debug-file", "/home/u/.bashrc"}, "--debug-file"},
		{[]string{"--bare"}, "--bare"},
		{[]string{"--safe-mode"}, "--safe-mode"},
		{[]string{"-p", "hi"}, "-p"},
		{[]string{"-cp"}, "-p"},
		{[]string{"--bg"}, "--bg"},
		{[]string{"--remote-control"}, "--remote-control"},
		{[]string{"--chrome"}, "--chrome"},
		{[]string{"-w", "x"}, "-w"},
		{[]string{"--resume", "abc"}, "--resume"},
		{[]string{"-r"}, "-r"},
		{[]string{"--session-id", "x"}, "--session-id"},
		{[]string{"--dangerously-skip"}, "--dangerously-skip"}, // unknown: no abbreviations, and unknown is dangerous
		{[]string{"--frobnicate"}, "--frobnicate"},
		{[]string{"--system-prompt-file", "/etc/shadow"}, "--system-prompt-file"},
		{[]string{"-x"}, "-x"},
		{[]string{"doctor"}, "doctor"},
		{[]string{"--model", "opus", "mcp", "add", "x"}, "mcp"},
		{[]string{"install"}, "install"},
		{[]string{"--", "--dangerously-skip-permissions"}, "--dangerously-skip-permissions"},
		{[]string{"go", "--print"}, "--print"},
	}
	for _, c := range dangerous {
		d := DangerousArgs(c.args, inside)
		if len(d) == 0 {
			t.Errorf("%q: safe, want dangerous", c.args)
			continue
		}
		if d[0].Arg != c.want || d[0].Reason == "" {
			t.Errorf("%q: %+v, want %q first", c.args, d, c.want)
		}
	}
	// Without a root check, --add-dir is safe anywhere.
	if d := DangerousArgs([]string{"--add-dir", "/etc"}, nil); len(d) != 0 {
		t.Errorf("--add-dir with no roots: %v", d)
	}
}

// Every option of the table names its danger in words a person reads in an
// error; both names of an option agree.
func TestClaudeArgsTable(t *testing.T) {
	pairs := [][2]string{{"-c", "--continue"}, {"-n", "--name"}, {"-d", "--debug"}, {"-p", "--print"}, {"-r", "--resume"},
		{"-w", "--worktree"}, {"--bg", "--background"}, {"--allowedTools", "--allowed-tools"}, {"--disallowedTools", "--disallowed-tools"},
		{"-h", "--help"}, {"-v", "--version"}}
	for _, p := range pairs {
		if claudeArgs[p[0]] != claudeArgs[p[1]] {
			t.Errorf("%s and %s differ: %+v %+v", p[0], p[1], claudeArgs[p[0]], claudeArgs[p[1]])
		}
	}
	for name := range claudeArgs {
		if !strings.HasPrefix(name, "-") || strings.Contains(name, "=") {
			t.Errorf("bad option name %q", name)
		}
		if len(name) == 2 && name[1] == '-' {
			t.Errorf("bad short option %q", name)
		}
	}
}

func FuzzDangerousArgs(f *testing.F) {
	f.Add("--model\x00opus\x00fix it")
	f.Add("--add-dir\x00/etc\x00--permission-mode=bypassPermissions")
	f.Add("-cdp\x00--\x00-x")
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, "\x00")
		d := DangerousArgs(args, func(string) bool { return false })
		// Anything that names a dangerous option somewhere as an option of
		// its own is found, unless it is the value of another option.
		for _, a := range args {
			if a == "--dangerously-skip-permissions" && len(d) == 0 && !valueContext(args) {
				t.Fatalf("%q: --dangerously-skip-permissions not found", args)
			}
		}
	})
}

// valueContext reports whether some option of args takes a value: then an
// argument may be that value rather than an option.
func valueContext(args []string) bool {
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		if spec, ok := claudeArgs[name]; ok && spec.value != valueNone {
			return true
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && len(a) > 1 {
			return true // a short cluster may take a value
		}
	}
	return false
}
