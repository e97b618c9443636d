package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServicePrintCarriesTheFlags(t *testing.T) {
	in := newInstall(t)
	in.env = map[string]string{"LANG": "C.UTF-8", "ANTHROPIC_API_KEY": "sk-secret"}
	wd, _ := os.Getwd()
	out := in.must("service", "print", "agent", "--os", "linux", "--hub", "https://hub.example.com", "--root", "rel/dir", "--root", "/abs", "--log-level", "warn")
	for _, want := range []string{
		"ExecStart=" + testExe(t) + " agent --data-dir=" + in.dataDir + " --hub=https://hub.example.com --log-level=warn --root=" + filepath.Join(wd, "rel/dir") + " --root=/abs\n",
		`Environment="PATH=` + os.Getenv("PATH") + `" "LANG=C.UTF-8"` + "\n",
		"EnvironmentFile=-%h/.config/corral/agent.env\n",
		"KillMode=process\n",
		"WantedBy=default.target\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the agent's unit lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "sk-secret") {
		t.Errorf("the unit carries a secret of the installing shell:\n%s", out)
	}

	hub := in.must("--data-dir", "/srv/corral", "service", "print", "hub", "--os", "linux", "--listen", "0.0.0.0:443", "--tls-cert", "/etc/c.pem", "--tls-key", "/etc/k.pem")
	for _, want := range []string{
		"User=corral\n",
		" hub --data-dir=/srv/corral --listen=0.0.0.0:443 --tls-cert=%d/tls-cert --tls-key=%d/tls-key\n",
		"LoadCredential=tls-cert:/etc/c.pem\n",
		"ReadWritePaths=/srv/corral\n",
		"AmbientCapabilities=CAP_NET_BIND_SERVICE\n",
		"ProtectSystem=strict\n",
	} {
		if !strings.Contains(hub, want) {
			t.Errorf("the hub's unit lacks %q:\n%s", want, hub)
		}
	}
	if strings.Contains(hub, "PrivateUsers") || strings.Contains(hub, "PATH=") {
		t.Errorf("the hub's unit on port 443:\n%s", hub)
	}
	if def := in.must("service", "print", "hub", "--os", "linux"); !strings.Contains(def, "--data-dir=/var/lib/corral\n") ||
		!strings.Contains(def, "StateDirectory=corral\n") || !strings.Contains(def, "PrivateUsers=yes\n") {
		t.Errorf("the default hub unit:\n%s", def)
	}
	if pkg := in.must("service", "print", "serve", "--os", "linux", "--package"); !strings.Contains(pkg, "ExecStart=/usr/bin/corral serve\n") ||
		!strings.Contains(pkg, `Environment="PATH=%h/.local/bin:`) {
		t.Errorf("the packaged serve unit:\n%s", pkg)
	}
	plist := in.must("service", "print", "serve", "--os", "darwin", "--listen", "127.0.0.1:8000")
	for _, want := range []string{"<string>dev.corral.serve</string>", "<string>--listen=127.0.0.1:8000</string>",
		"<key>AbandonProcessGroup</key>", filepath.Join(in.home, "Library/Logs/corral/serve.log")} {
		if !strings.Contains(plist, want) {
			t.Errorf("the plist lacks %q:\n%s", want, plist)
		}
	}
}

func TestServiceRefusesWhatWouldNotWork(t *testing.T) {
	in := newInstall(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"service", "print", "agent", "--hub", "https://h.example", "--token", "cd_secret"}, "readable in the unit file"},
		{[]string{"service", "print", "agent", "--root", "/x"}, "needs --hub"},
		{[]string{"service", "print", "serve", "--bogus"}, "unknown flag"},
		{[]string{"service", "print", "serve", "--hub", "https://h.example"}, "agent's flags"},
		{[]string{"service", "install", "hub"}, ""},
		{[]string{"service", "status", "nope"}, "no service"},
	} {
		r := in.run(c.args...)
		if c.want == "" {
			// The hub's system unit: root only, or no systemd here.
			if r.code == 0 {
				t.Errorf("%v succeeded here: %+v", c.args, r)
			}
			continue
		}
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: %+v, want an error with %q", c.args, r, c.want)
		}
		if strings.Contains(r.stdout, "cd_secret") || strings.Contains(r.stderr, "cd_secret") {
			t.Errorf("%v printed the token", c.args)
		}
	}
}
