package httpapi_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/httpapi"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

func TestRoutesHappyPaths(t *testing.T) {
	t.Parallel()
	s := newServer(t, serverOptions{})

	var v api.VersionInfo
	s.ok("GET", "/api/v1/version", "", 200, &v)
	if v.DataDir != s.dataDir || v.PID != os.Getpid() || v.Version == "" {
		t.Errorf("version = %+v", v)
	}

	// An empty list is [], not null.
	code, _, b := s.call("GET", "/api/v1/sessions", "")
	if code != 200 || strings.TrimSpace(string(b)) != "[]" {
		t.Errorf("empty list: %d %s", code, b)
	}

	created := s.shell("web")
	if created.Name != "web" || created.Kind != api.KindShell || created.Status != api.StatusIdle || created.Dir != s.proj {
		t.Errorf("created %+v", created)
	}
	var list []api.Session
	s.ok("GET", "/api/v1/sessions", "", 200, &list)
	if len(list) != 1 || list[0].ID != created.ID {
		t.Errorf("list = %+v", list)
	}
	var one api.Session
	s.ok("GET", "/api/v1/sessions/"+created.ID, "", 200, &one)
	if one.ID != created.ID || one.Name != "web" {
		t.Errorf("get = %+v", one)
	}

	var renamed api.Session
	s.ok("PATCH", "/api/v1/sessions/"+created.ID, `{"name":"renamed"}`, 200, &renamed)
	if renamed.Name != "renamed" {
		t.Errorf("rename answered %+v", renamed)
	}

	s.ok("POST", "/api/v1/sessions/"+created.ID+"/input", `{"text":"echo via-api-$((5*5))","enter":true}`, 204, nil)
	var scr api.Screen
	waitUntil(t, 10*time.Second, "the echo on the screen", func() bool {
		s.ok("GET", "/api/v1/sessions/"+created.ID+"/screen", "", 200, &scr)
		return strings.Contains(scr.Text, "via-api-25")
	})
	if scr.Cols == 0 || scr.Rows == 0 {
		t.Errorf("screen size %dx%d", scr.Cols, scr.Rows)
	}
	s.ok("POST", "/api/v1/sessions/"+created.ID+"/input", `{"text":"echo keys-$((2*3))"}`, 204, nil)
	s.ok("POST", "/api/v1/sessions/"+created.ID+"/keys", `{"keys":["Enter"]}`, 204, nil)
	waitUntil(t, 10*time.Second, "the keyed echo", func() bool {
		s.ok("GET", "/api/v1/sessions/"+created.ID+"/screen?history=100", "", 200, &scr)
		return strings.Contains(scr.Text, "keys-6")
	})

	var res api.RunResult
	s.ok("POST", "/api/v1/sessions/"+created.ID+"/run", `{"argv":["sh","-c","echo ran; exit 2"],"timeout_ms":5000}`, 200, &res)
	if res.Output != "ran\n" || res.ExitCode != 2 {
		t.Errorf("run = %+v", res)
	}

	s.ok("POST", "/api/v1/sessions/"+created.ID+"/viewed", "", 204, nil)

	if err := os.Mkdir(filepath.Join(s.proj, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	var l api.DirListing
	s.ok("GET", "/api/v1/dirs?path="+url.QueryEscape(s.proj), "", 200, &l)
	if l.Path != s.proj || l.Parent != s.home || len(l.Entries) != 1 || l.Entries[0].Name != "sub" || !l.Entries[0].IsDir {
		t.Errorf("dirs = %+v", l)
	}
	s.ok("GET", "/api/v1/dirs", "", 200, &l)
	if l.Path != s.home {
		t.Errorf("dirs without a path = %+v, want the home root", l)
	}

	code, _, b = s.call("GET", "/api/v1/resumable?dir="+url.QueryEscape(s.proj), "")
	if code != 200 || strings.TrimSpace(string(b)) != "[]" {
		t.Errorf("resumable of a fresh dir: %d %s, want []", code, b)
	}

	s.ok("DELETE", "/api/v1/sessions/"+created.ID, "", 204, nil)
	s.ok("GET", "/api/v1/sessions", "", 200, &list)
	if len(list) != 0 {
		t.Errorf("after delete: %+v", list)
	}
}

func TestRouteErrors(t *testing.T) {
	t.Parallel()
	s := newServer(t, serverOptions{})
	sess := s.shell("x")
	id := sess.ID
	big := `{"text":"` + strings.Repeat("a", httpapi.MaxBody+1) + `"}`

	tests := []struct {
		method, path, body string
		status             int
		code, msg          string
	}{
		{"GET", "/api/v1/sessions/nosuchsession", "", 404, api.CodeNotFound, "nosuchsession"},
		{"GET", "/api/v1/sessions/..%2f..%2fetc", "", 404, api.CodeNotFound, "no session"},
		{"DELETE", "/api/v1/sessions/nosuchsession", "", 404, api.CodeNotFound, "no session"},
		{"PATCH", "/api/v1/sessions/nosuchsession", `{"name":"a"}`, 404, api.CodeNotFound, "no session"},
		{"POST", "/api/v1/sessions/nosuchsession/input", `{"text":"a"}`, 404, api.CodeNotFound, "no session"},
		{"POST", "/api/v1/sessions/nosuchsession/keys", `{"keys":["a"]}`, 404, api.CodeNotFound, "no session"},
		{"GET", "/api/v1/sessions/nosuchsession/screen", "", 404, api.CodeNotFound, "no session"},
		{"POST", "/api/v1/sessions/nosuchsession/run", `{"argv":["true"]}`, 404, api.CodeNotFound, "no session"},
		{"POST", "/api/v1/sessions/nosuchsession/viewed", "", 404, api.CodeNotFound, "no session"},
		// A DELETE's body is optional; when there, it is read like any.
		{"DELETE", "/api/v1/sessions/" + id, `{"remove_worktree":true}`, 400, api.CodeBadRequest, "no worktree corral made"},
		{"DELETE", "/api/v1/sessions/" + id, `{"remove":true}`, 400, api.CodeBadRequest, "unknown field"},
		{"GET", "/api/v1/sessions/" + id + "/git", "", 409, api.CodeNotARepository, "not in a git repository"},
		{"GET", "/api/v1/sessions/" + id + "/git/diff?path=..%2Fx", "", 400, api.CodeBadRequest, "clean path"},
		{"GET", "/api/v1/sessions/" + id + "/git/diff?staged=maybe", "", 400, api.CodeBadRequest, "staged"},

		{"POST", "/api/v1/sessions", `{"dir":`, 400, api.CodeBadRequest, "bad JSON"},
		{"POST", "/api/v1/sessions", `{"dir":5}`, 400, api.CodeBadRequest, "bad JSON"},
		{"POST", "/api/v1/sessions", `{"dir":"/tmp","bogus":1}`, 400, api.CodeBadRequest, `unknown field "bogus"`},
		{"POST", "/api/v1/sessions", `{"dir":"/tmp"} {}`, 400, api.CodeBadRequest, "trailing data"},
		{"POST", "/api/v1/sessions", `{"dir":"/tmp"}garbage`, 400, api.CodeBadRequest, "trailing data"},
		{"POST", "/api/v1/sessions", "", 400, api.CodeBadRequest, "empty request body"},
		{"POST", "/api/v1/sessions", `[]`, 400, api.CodeBadRequest, "bad JSON"},
		{"POST", "/api/v1/sessions", `{"dir":"rel","shell":true}`, 400, api.CodeBadRequest, "absolute"},
		{"POST", "/api/v1/sessions", `null`, 400, api.CodeBadRequest, "dir is required"},
		{"POST", "/api/v1/sessions", big, 413, api.CodeTooLarge, "over"},
		{"POST", "/api/v1/sessions/" + id + "/input", big, 413, api.CodeTooLarge, "over 1048576 bytes"},
		{"POST", "/api/v1/sessions/" + id + "/input", `{"txt":"a"}`, 400, api.CodeBadRequest, "unknown field"},
		{"POST", "/api/v1/sessions/" + id + "/input", `{}`, 400, api.CodeBadRequest, "nothing to send"},
		{"PATCH", "/api/v1/sessions/" + id, `{"name":""}`, 400, api.CodeBadRequest, "empty"},
		{"PATCH", "/api/v1/sessions/" + id, `{"name":"a"}{"name":"b"}`, 400, api.CodeBadRequest, "trailing"},
		{"POST", "/api/v1/sessions/" + id + "/keys", `{"keys":[]}`, 400, api.CodeBadRequest, "no keys"},
		{"POST", "/api/v1/sessions/" + id + "/keys", `{"keys":["Bogus"]}`, 400, api.CodeBadRequest, "invalid key"},
		{"GET", "/api/v1/sessions/" + id + "/screen?history=lots", "", 400, api.CodeBadRequest, "history"},
		{"GET", "/api/v1/sessions/" + id + "/screen?history=-1", "", 400, api.CodeBadRequest, "history"},
		{"GET", "/api/v1/sessions/" + id + "/screen?history=100001", "", 400, api.CodeBadRequest, "history"},
		{"POST", "/api/v1/sessions/" + id + "/run", `{"argv":[]}`, 400, api.CodeBadRequest, "no command"},
		{"POST", "/api/v1/sessions/" + id + "/run", `{"argv":[""]}`, 400, api.CodeBadRequest, "no command"},
		{"GET", "/api/v1/dirs?path=rel", "", 400, api.CodeBadRequest, "absolute"},
		{"GET", "/api/v1/dirs?path=/etc", "", 403, api.CodeForbidden, "outside"},
		{"GET", "/api/v1/dirs?path=" + url.QueryEscape(s.home+"/../"), "", 403, api.CodeForbidden, "outside"},
		{"GET", "/api/v1/dirs?path=" + url.QueryEscape(s.home+"/missing"), "", 404, api.CodeNotFound, "no such directory"},
		{"GET", "/api/v1/resumable", "", 400, api.CodeBadRequest, "dir is required"},
		{"GET", "/api/v1/resumable?dir=rel", "", 400, api.CodeBadRequest, "absolute"},
		{"GET", "/api/v1/events?since=yesterday", "", 400, api.CodeBadRequest, "since"},
		{"GET", "/api/v1/events?since=-1", "", 400, api.CodeBadRequest, "since"},
		{"GET", "/api/v1/nothing", "", 404, api.CodeNotFound, "no such API route"},
		{"GET", "/api/v2/sessions", "", 404, api.CodeNotFound, "no such API route"},
		{"POST", "/api/v1/sessions/" + id + "/explode", "", 404, api.CodeNotFound, "no such API route"},
		{"GET", "/api/", "", 404, api.CodeNotFound, "no such API route"},
	}
	for _, tt := range tests {
		// Failures name the method and path.
		s.apiErr(tt.method, tt.path, tt.body, tt.status, tt.code, tt.msg)
	}
	// Nothing above touched the session.
	var one api.Session
	s.ok("GET", "/api/v1/sessions/"+id, "", 200, &one)
	if one.Name != "x" {
		t.Errorf("session changed by refused requests: %+v", one)
	}
}

func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	s := newServer(t, serverOptions{})
	code, hdr, b := s.call("PUT", "/api/v1/sessions", `{}`)
	if code != http.StatusMethodNotAllowed {
		t.Errorf("PUT /api/v1/sessions: %d %s, want 405", code, b)
	}
	if allow := hdr.Get("Allow"); !strings.Contains(allow, "GET") || !strings.Contains(allow, "POST") {
		t.Errorf("Allow header %q", allow)
	}
	var e api.Error
	if json.Unmarshal(b, &e) != nil || e.Code == "" {
		t.Errorf("405 body is not a JSON API error: %q", b)
	}
}

func TestRefuseBrowsers(t *testing.T) {
	t.Parallel()
	s := newServer(t, serverOptions{api: httpapi.Options{RefuseBrowsers: true}})
	s.apiErr("GET", "/api/v1/sessions", "", 403, api.CodeForbidden, "browser", "Origin", "http://evil.example")
	s.apiErr("GET", "/api/v1/version", "", 403, api.CodeForbidden, "browser", "Referer", "http://evil.example/page")
	s.apiErr("POST", "/api/v1/sessions", `{"dir":"/tmp","shell":true}`, 403, api.CodeForbidden, "browser", "Origin", "null")
	s.apiErr("GET", "/api/v1/events", "", 403, api.CodeForbidden, "browser", "Origin", "http://localhost")
	// Refused before routing: even an unknown route says forbidden.
	s.apiErr("GET", "/api/v1/nothing", "", 403, api.CodeForbidden, "browser", "Origin", "http://evil.example")
	var list []api.Session
	s.ok("GET", "/api/v1/sessions", "", 200, &list)
	if len(list) != 0 {
		t.Errorf("a refused create created a session: %+v", list)
	}

	open := newServer(t, serverOptions{})
	code, _, b := open.call("GET", "/api/v1/version", "", "Origin", "http://localhost")
	if code != 200 {
		t.Errorf("without RefuseBrowsers, Origin is refused: %d %s", code, b)
	}
}

func TestInternalErrorIsJSONAndLogged(t *testing.T) {
	t.Parallel()
	var logs testio.SyncBuffer
	s := newServer(t, serverOptions{api: httpapi.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
	// A real failure: the database is gone under the agent.
	if err := s.st.Close(); err != nil {
		t.Fatal(err)
	}
	e := s.apiErr("POST", "/api/v1/sessions", `{"dir":"`+s.proj+`","shell":true}`, 500, api.CodeInternal, "save session")
	if !strings.Contains(logs.String(), "save session") || !strings.Contains(logs.String(), "/api/v1/sessions") {
		t.Errorf("internal error %q not logged with its route: %q", e.Message, logs.String())
	}
	// Client errors are not logged as errors.
	before := logs.String()
	s.apiErr("GET", "/api/v1/sessions/nosuchsession", "", 404, api.CodeNotFound, "no session")
	if logs.String() != before {
		t.Errorf("a 404 was logged: %q", strings.TrimPrefix(logs.String(), before))
	}
}
