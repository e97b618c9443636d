package cli

import (
	"strings"
	"testing"
)

// TestTokenOnlyOverHTTPS: the CLI and `corral agent` refuse to send a token
// over plain http (or ws) to another machine, and say to use https://.
func TestTokenOnlyOverHTTPS(t *testing.T) {
	in := newInstall(t)
	for _, args := range [][]string{
		{"--hub", "http://hub.example:8080", "--token", "cu_x", "ls"},
		{"--hub", "http://192.0.2.1", "--token", "cu_x", "watch"},
		{"agent", "--hub", "http://hub.example:8080"},
		{"agent", "--hub", "ws://192.0.2.1:80"},
	} {
		r := in.run(args...)
		if r.code != 1 || !strings.Contains(r.stderr, "https://") || !strings.Contains(r.stderr, "clear text") {
			t.Errorf("corral %s: exit %d, stderr %q; want a refusal naming https://", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	in.env = map[string]string{"CORRAL_HUB": "http://hub.example", "CORRAL_TOKEN": "cu_x", tokenEnv: "ce_x"}
	if r := in.run("ls"); r.code != 1 || !strings.Contains(r.stderr, "https://hub.example") {
		t.Errorf("$CORRAL_HUB over http: %+v", r)
	}
	// With an enrolment token in the environment too.
	if r := in.run("agent", "--hub", "http://hub.example"); r.code != 1 || !strings.Contains(r.stderr, "https://hub.example") {
		t.Errorf("agent with $%s over http: %+v", tokenEnv, r)
	}
}
