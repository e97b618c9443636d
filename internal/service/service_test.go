package service

import (
	"bytes"
	"encoding/xml"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// specs are the units the golden files hold.
func specs() map[string]Spec {
	return map[string]Spec{
		"serve": {Kind: Serve, Exe: "/usr/local/bin/corral", Version: "v1.2.3",
			Args: []string{"--data-dir=/home/me/.local/share/corral", "--listen=127.0.0.1:7777", "--root=/home/me/src", "--root=/home/me/my projects"},
			Env:  []string{"PATH=/home/me/.local/bin:/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", `CLAUDE_CONFIG_DIR=/home/me/50%"odd"`}},
		"agent": {Kind: Agent, Exe: "/usr/bin/corral", Version: "v1.2.3",
			Args: []string{"--data-dir=/home/me/.local/share/corral", "--hub=https://hub.example.com", "--log-level=debug", "--root=/home/me/$HOME"},
			Env:  []string{"PATH=/usr/bin:/bin"}},
		"serve-package": {Kind: Serve, Exe: "/usr/bin/corral", Version: "v1.2.3", HomePath: true},
		"hub": {Kind: Hub, Exe: "/usr/bin/corral", Version: "v1.2.3", User: SystemUser, DataDir: StateDir,
			Args: []string{"--data-dir=" + StateDir, "--listen=127.0.0.1:7777", "--allow-host=hub.example.com"}},
		"hub-tls": {Kind: Hub, Exe: "/usr/local/bin/corral", Version: "v1.2.3", User: SystemUser, DataDir: "/srv/corral data",
			Args:        []string{"--data-dir=/srv/corral data", "--listen=0.0.0.0:443"},
			Credentials: []Credential{{"tls-cert", "/etc/letsencrypt/live/hub/fullchain.pem"}, {"tls-key", "/etc/letsencrypt/live/hub/privkey.pem"}},
			Privileged:  true},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/service -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./internal/service -update rewrites it):\n%s", name, got)
	}
}

func TestSystemdUnitsGolden(t *testing.T) {
	for name, s := range specs() {
		t.Run(name, func(t *testing.T) { golden(t, name+".service", SystemdUnit(s)) })
	}
}

func TestLaunchdPlistsGolden(t *testing.T) {
	for _, name := range []string{"serve", "agent"} {
		t.Run(name, func(t *testing.T) {
			p := LaunchdPlist(specs()[name], "/Users/me/Library/Logs/corral")
			golden(t, name+".plist", p)
			// Well-formed XML whose program arguments come back exactly.
			d := xml.NewDecoder(bytes.NewReader(p))
			var args []string
			inArray := false
			for {
				tok, err := d.Token()
				if err != nil {
					if err.Error() != "EOF" {
						t.Fatalf("not well-formed: %v", err)
					}
					break
				}
				switch tk := tok.(type) {
				case xml.StartElement:
					if tk.Name.Local == "array" {
						inArray = true
					} else if tk.Name.Local == "string" && inArray {
						var s string
						d.DecodeElement(&s, &tk)
						args = append(args, s)
					}
				case xml.EndElement:
					if tk.Name.Local == "array" {
						inArray = false
					}
				}
			}
			s := specs()[name]
			want := append([]string{s.Exe, string(s.Kind)}, s.Args...)
			if strings.Join(args, "\x00") != strings.Join(want, "\x00") {
				t.Errorf("ProgramArguments = %q, want %q", args, want)
			}
		})
	}
}

func TestExecArgQuoting(t *testing.T) {
	for in, want := range map[string]string{
		"--listen=127.0.0.1:7777": "--listen=127.0.0.1:7777",
		"--root=/a b":             `"--root=/a b"`,
		"50%":                     "50%%",
		"$HOME":                   "$$HOME",
		`a"b`:                     `"a\"b"`,
		`back\slash`:              `"back\\slash"`,
		"":                        `""`,
	} {
		if got := execArg(in); got != want {
			t.Errorf("execArg(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestSystemdAnalyzeVerify has systemd check the generated units: every
// key known and every value parsed, and the hub's sandbox scored. It needs
// systemd-analyze (Debian's systemd package; scripts/setup.sh --test
// installs it), not a running systemd.
func TestSystemdAnalyzeVerify(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CORRAL_REQUIRE_CLAUDE") != "" {
			t.Fatal("systemd-analyze is not installed (apt-get install systemd)")
		}
		t.Skip("systemd-analyze is not installed (apt-get install systemd)")
	}
	exe, err := os.Executable() // verify wants an ExecStart that exists
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	runtime := filepath.Join(dir, "run")
	os.Mkdir(runtime, 0o700)
	for name, s := range specs() {
		t.Run(name, func(t *testing.T) {
			s.Exe = exe
			path := filepath.Join(dir, s.Kind.Unit())
			os.WriteFile(path, SystemdUnit(s), 0o644)
			args := []string{"verify", "--man=no"}
			if !s.Kind.System() {
				args = append(args, "--user")
			}
			cmd := exec.Command(sa, append(args, path)...)
			// A user manager's checks want a runtime directory and find
			// the unit's %h here.
			cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "SYSTEMD_LOG_LEVEL=notice")
			out, err := cmd.CombinedOutput()
			// verify exits 0 on mere warnings (an unknown key): any output
			// is a failure.
			if err != nil || len(bytes.TrimSpace(out)) > 0 {
				t.Errorf("systemd-analyze %s: %v\n%s\n%s", strings.Join(args, " "), err, out, SystemdUnit(s))
			}
			if !s.Kind.System() {
				return
			}
			// The hub's sandbox, scored by systemd (0 best, 10 worst).
			out, err = exec.Command(sa, "security", "--offline=yes", "--no-pager", path).CombinedOutput()
			if err != nil {
				t.Fatalf("systemd-analyze security: %v\n%s", err, out)
			}
			score := exposure(t, out)
			limit := 2.0
			if s.Privileged {
				limit = 2.5 // it keeps CAP_NET_BIND_SERVICE and no user namespace
			}
			if score > limit {
				t.Errorf("the hub's exposure is %.1f, above %.1f:\n%s", score, limit, out)
			}
			t.Logf("%s: exposure %.1f", name, score)
		})
	}
}

// exposure reads "Overall exposure level for X: 1.9 OK" from the output.
func exposure(t *testing.T, out []byte) float64 {
	t.Helper()
	i := bytes.Index(out, []byte("Overall exposure level for "))
	if i < 0 {
		t.Fatalf("no exposure level in:\n%s", out)
	}
	line := string(out[i:])
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	fields := strings.Fields(line[strings.LastIndex(line, ": ")+2:])
	f, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		t.Fatalf("exposure %q: %v", line, err)
	}
	return f
}

// TestPackagedSysusersIsTheSame keeps the packages' account file and the
// one 'corral service install hub' writes alike.
func TestPackagedSysusersIsTheSame(t *testing.T) {
	b, err := os.ReadFile("../../packaging/corral.sysusers")
	if err != nil {
		t.Fatal(err)
	}
	if got := Sysusers(SystemUser, StateDir); !bytes.Equal(got, b) {
		t.Errorf("packaging/corral.sysusers:\n%s\nservice.Sysusers:\n%s", b, got)
	}
}
