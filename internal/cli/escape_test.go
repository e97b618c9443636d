package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/hub"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/termsafe"
)

// evil is what a compromised hub or device may put in any string: an OSC 52
// clipboard write, a CSI that clears the screen, the same as 8-bit C1
// controls, a bidi override, a title change ending in BEL.
const evil = "\x1b]52;c;cHduZWQ=\x07\x1b[2J\u009b31m\u009d0;t\u009c\u202eexe.txt\x1b]0;pwned\x07"

// unsafeIn returns the unsafe characters in out; newlines and tabs are the
// layout of text output.
func unsafeIn(out string) []rune {
	var bad []rune
	for _, r := range out {
		if termsafe.Unsafe(r) && r != '\n' && r != '\t' {
			bad = append(bad, r)
		}
	}
	return bad
}

// hostileHub serves the API with evil in every string it can carry.
func hostileHub(t *testing.T) *httptest.Server {
	t.Helper()
	now := time.Now()
	sess := api.Session{
		ID: "ab" + evil, Name: "name" + evil, Dir: "/home/" + evil, Kind: api.KindClaude,
		Status: api.Status("idle" + evil), Error: "err" + evil, LastMessage: "said" + evil,
		Device: "dev" + evil, CreatedAt: now, UpdatedAt: now,
	}
	busy := sess
	busy.Status = api.StatusBusy
	busy.CurrentTool = "Bash" + evil
	mux := http.NewServeMux()
	writeJSON := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /api/v1/version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, api.VersionInfo{Version: "9" + evil, PID: 1})
	})
	mux.HandleFunc("GET /api/v1/sessions", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, []api.Session{sess})
	})
	mux.HandleFunc("POST /api/v1/sessions", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, sess)
	})
	mux.HandleFunc("GET /api/v1/sessions/{id}/screen", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, api.Screen{Text: "screen\n" + evil + "\n", Cols: 80, Rows: 24})
	})
	mux.HandleFunc("POST /api/v1/sessions/{id}/run", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, api.RunResult{Output: "out" + evil + "\n"})
	})
	mux.HandleFunc("POST /api/v1/sessions/{id}/download", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, api.DownloadResult{Path: "/tmp/" + evil, Size: 1, SHA256: "00" + evil})
	})
	mux.HandleFunc("POST /api/v1/sessions/{id}/answer", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, api.AnswerResult{Answered: "1. Yes" + evil})
	})
	mux.HandleFunc("GET /api/v1/resumable", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, []api.Resumable{{ID: "0f8fad5b" + evil, FirstPrompt: "prompt" + evil, LastActivity: now}})
	})
	mux.HandleFunc("GET /api/v1/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		enc.Encode(api.Event{Seq: 1, Type: api.EventSnapshot, Time: now, Sessions: []api.Session{sess}})
		enc.Encode(api.Event{Seq: 2, Type: api.EventSession, Time: now, Session: &busy, Prev: api.Status("was" + evil)})
		enc.Encode(api.Event{Seq: 3, Type: api.EventRemoved, Time: now, ID: "gone" + evil})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 409, api.Error{Code: api.CodeConflict, Message: "refused" + evil})
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs
}

// TestOutputIsEscaped: every command that prints what a hub sent prints
// no character that steers the terminal, in text and in JSON, and JSON
// still carries the data.
func TestOutputIsEscaped(t *testing.T) {
	in := newInstall(t)
	hs := hostileHub(t)
	hubArgs := []string{"--hub", hs.URL, "--token", "t"}
	// "ab" names the session by a unique prefix of its id.
	for _, c := range []struct {
		args []string
		// shows is a piece of the data that must be visible, escaped.
		shows string
	}{
		{[]string{"ls"}, `name\x1b]52;c;cHduZWQ=\x07`},
		{[]string{"watch"}, `was\x1b]52`},
		{[]string{"capture", "ab"}, `\x1b[2J`},
		{[]string{"run", "ab", "--", "true"}, `out\x1b]52`},
		{[]string{"version"}, `9\x1b]52`},
		{[]string{"kill", "ab"}, `refused\x1b]52`},
		{[]string{"rename", "ab", "n"}, `refused\x1b]52`},
		{[]string{"resumable", "/tmp"}, `prompt\x1b]52`},
		{[]string{"new", "--dir", "/tmp"}, `ab\x1b]52`},
		{[]string{"download", "ab", "https://example.com/f"}, `\u202eexe.txt`},
		{[]string{"answer", "ab", "1", "--dialog", "d1"}, `1. Yes\x1b]52`},
	} {
		r := in.run(append(hubArgs, c.args...)...)
		out := r.stdout + r.stderr
		if bad := unsafeIn(out); len(bad) > 0 {
			t.Errorf("corral %s printed %q raw:\n%q", strings.Join(c.args, " "), bad, out)
		}
		if !strings.Contains(out, c.shows) {
			t.Errorf("corral %s does not show %q:\n%q", strings.Join(c.args, " "), c.shows, out)
		}
	}

	// JSON: the same data, every unsafe character a \u escape.
	for _, c := range []struct {
		args []string
		into any
	}{
		{[]string{"ls", "--json"}, &[]api.Session{}},
		{[]string{"capture", "--json", "ab"}, &api.Screen{}},
		{[]string{"new", "--json", "--dir", "/tmp"}, &api.Session{}},
		{[]string{"resumable", "--json", "/tmp"}, &[]api.Resumable{}},
		{[]string{"download", "--json", "ab", "https://example.com/f"}, &api.DownloadResult{}},
	} {
		r := in.run(append(hubArgs, c.args...)...)
		if r.code != 0 {
			t.Fatalf("corral %s: %+v", strings.Join(c.args, " "), r)
		}
		if bad := unsafeIn(r.stdout); len(bad) > 0 {
			t.Errorf("corral %s printed %q raw", strings.Join(c.args, " "), bad)
		}
		if err := json.Unmarshal([]byte(r.stdout), c.into); err != nil {
			t.Fatalf("corral %s: %v\n%s", strings.Join(c.args, " "), err, r.stdout)
		}
		if b, _ := json.Marshal(c.into); !strings.Contains(string(b), "cHduZWQ=") {
			t.Errorf("corral %s lost the data: %s", strings.Join(c.args, " "), b)
		}
	}
	r := in.run(append(hubArgs, "ls", "--json")...)
	var list []api.Session
	json.Unmarshal([]byte(r.stdout), &list)
	if len(list) != 1 || list[0].Name != "name"+evil || list[0].Dir != "/home/"+evil {
		t.Errorf("ls --json does not decode to what the hub sent: %+v", list)
	}
	r = in.run(append(hubArgs, "watch", "--json")...)
	if bad := unsafeIn(r.stdout); len(bad) > 0 {
		t.Errorf("watch --json printed %q raw", bad)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 {
		t.Fatalf("watch --json printed %d lines:\n%s", len(lines), r.stdout)
	}
	var ev api.Event
	if err := json.Unmarshal([]byte(lines[1]), &ev); err != nil || ev.Prev != api.Status("was"+evil) || ev.Session.CurrentTool != "Bash"+evil {
		t.Errorf("watch --json event: %+v (%v)", ev, err)
	}

	// --raw is the one way to get the bytes of run's output as they are.
	r = in.run(append(hubArgs, "run", "--raw", "ab", "--", "true")...)
	if r.stdout != "out"+evil+"\n" {
		t.Errorf("run --raw printed %q", r.stdout)
	}
}

// TestHubDeviceLsEscapes: a device's hostname is whatever the device said
// when it connected.
func TestHubDeviceLsEscapes(t *testing.T) {
	in := newInstall(t)
	e := &env{getenv: in.getenv}
	err := withStore(e, func(st *store.SQLite) error {
		acc := hub.NewAccounts(st)
		ctx := context.Background()
		if _, err := acc.AddUser(ctx, "alice", ""); err != nil {
			return err
		}
		d, _, err := acc.AddDevice(ctx, "alice", "laptop", time.Hour)
		if err != nil {
			return err
		}
		return acc.Seen(ctx, d.ID, "host"+evil)
	})
	if err != nil {
		t.Fatal(err)
	}
	r := in.run("hub", "device", "ls")
	if r.code != 0 {
		t.Fatalf("hub device ls: %+v", r)
	}
	if bad := unsafeIn(r.stdout); len(bad) > 0 {
		t.Errorf("hub device ls printed %q raw:\n%q", bad, r.stdout)
	}
	if !strings.Contains(r.stdout, `host\x1b]52;c;cHduZWQ=\x07`) || !strings.Contains(r.stdout, "laptop") {
		t.Errorf("hub device ls:\n%s", r.stdout)
	}
	r = in.run("hub", "device", "ls", "--json")
	if bad := unsafeIn(r.stdout); len(bad) > 0 {
		t.Errorf("hub device ls --json printed %q raw:\n%q", bad, r.stdout)
	}
	var list []hub.Registration
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 {
		t.Fatalf("hub device ls --json: %v\n%s", err, r.stdout)
	}
	if list[0].Hostname != "host"+evil {
		t.Errorf("hostname %q, want %q", list[0].Hostname, "host"+evil)
	}
}
