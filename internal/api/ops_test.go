package api_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/api"
)

// TestOps checks the declarations against the rules the servers and the
// hub rely on.
func TestOps(t *testing.T) {
	names := map[string]bool{}
	routes := map[string]bool{}
	sessionReq := reflect.TypeFor[api.SessionRequest]()
	deviceReq := reflect.TypeFor[api.DeviceRequest]()
	for _, o := range api.Ops() {
		if o.Name == "" || o.Doc == "" || o.Request == nil || o.Result == nil {
			t.Errorf("%+v: name, doc and types are required", o)
		}
		if names[o.Name] {
			t.Errorf("op %q declared twice", o.Name)
		}
		names[o.Name] = true
		if (o.Method == "") != (o.Path == "") || (o.Path == "") != (o.Scope == api.ScopeLink) {
			t.Errorf("%s: a link op has no route, every other op has one", o.Name)
		}
		if o.Path != "" {
			if !strings.HasPrefix(o.Path, "/api/"+api.Version+"/") {
				t.Errorf("%s: path %s outside /api/%s", o.Name, o.Path, api.Version)
			}
			r := o.Method + " " + o.Path
			if routes[r] {
				t.Errorf("%s: route %s taken twice", o.Name, r)
			}
			routes[r] = true
		}
		fields := api.FieldNames(o.Request)
		for _, p := range o.PathParams() {
			if text, ok := fields[p]; !ok || !text {
				t.Errorf("%s: path parameter {%s} is no text field of %s", o.Name, p, o.Request)
			}
		}
		if o.Method == "GET" {
			for name, text := range fields {
				if !text {
					t.Errorf("%s: GET takes its request from the query, and %s.%s cannot travel there", o.Name, o.Request, name)
				}
			}
		}
		switch o.Scope {
		case api.ScopeSession:
			if !o.Request.Implements(sessionReq) || !strings.Contains(o.Path, "{id}") {
				t.Errorf("%s: a session op's request embeds SessionRef and its path has {id}", o.Name)
			}
		case api.ScopeDevice:
			if !o.Request.Implements(deviceReq) {
				t.Errorf("%s: a device op's request names its device", o.Name)
			}
		case api.ScopeLocal, api.ScopeUser, api.ScopeLink:
		default:
			t.Errorf("%s: scope %q", o.Name, o.Scope)
		}
	}
	// What Ops lists is what the package declares.
	for _, n := range []string{"create", "kill", "rename", "input", "keys", "viewed", "capture", "run", "dirs", "resumable",
		"timeline", "download", "git_status", "git_diff", "term_open", "term_close", "term_resize", "answer", "restart", "version", "sessions", "session", "devices",
		"web_config", "notifications", "settings", "push_subscribe", "push_unsubscribe", "push_test"} {
		if !names[n] {
			t.Errorf("op %q is not in Ops", n)
		}
	}
	if len(names) != 29 {
		t.Errorf("%d ops; a new one needs its line above", len(names))
	}
}

func TestSuccessStatus(t *testing.T) {
	for _, tt := range []struct {
		op   api.Operation
		want int
	}{{api.OpCreate, 201}, {api.OpDownload, 201}, {api.OpKill, 204}, {api.OpInput, 204}, {api.OpRename, 200}, {api.OpSessions, 200}} {
		if got := tt.op.Info().SuccessStatus(); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.op.Info().Name, got, tt.want)
		}
	}
}

func TestText(t *testing.T) {
	req := api.CaptureRequest{SessionRef: api.SessionRef{ID: "a/b c"}, History: 40}
	path, err := api.OpCapture.Info().Target(req)
	if err != nil || path != "/api/v1/sessions/a%2Fb%20c/screen?history=40" {
		t.Errorf("capture target %q %v", path, err)
	}
	path, err = api.OpDirs.Info().Target(&api.DirsRequest{Path: "/x y"})
	if err != nil || path != "/api/v1/dirs?path=%2Fx+y" {
		t.Errorf("dirs target %q %v", path, err)
	}
	if _, err := api.OpKill.Info().Target(api.KillRequest{}); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("a path without its id: %v", err)
	}
	path, _ = api.OpInput.Info().Target(api.InputRequest{SessionRef: api.SessionRef{ID: "s1"}, Text: "x"})
	if path != "/api/v1/sessions/s1/input" {
		t.Errorf("a POST's fields stay out of its path: %q", path)
	}

	var got api.CaptureRequest
	if err := api.DecodeText(url.Values{"id": {"s1"}, "history": {"12"}, "other": {"x"}}, &got); err != nil || got.ID != "s1" || got.History != 12 {
		t.Errorf("decoded %+v %v", got, err)
	}
	err = api.DecodeText(url.Values{"history": {"lots"}}, &got)
	if !errors.Is(err, api.ErrBadRequest) || !strings.Contains(err.Error(), "history") {
		t.Errorf("a bad number: %v", err)
	}
	var tr api.TermOpenRequest
	if err := api.DecodeText(url.Values{"offset": {"-1"}}, &tr); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("a negative offset: %v", err)
	}
	var run api.RunRequest
	if err := api.DecodeText(url.Values{"argv": {"ls"}}, &run); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("a list as text: %v", err)
	}
	if !api.OpKill.Info().BodyFields() || api.OpViewed.Info().BodyFields() || !api.OpRename.Info().BodyFields() || api.OpSessions.Info().BodyFields() {
		t.Errorf("BodyFields: only the path's id is no body (kill has options)")
	}
}

func FuzzDecodeText(f *testing.F) {
	f.Add("history", "12")
	f.Add("offset", "-1")
	f.Add("enter", "maybe")
	f.Fuzz(func(t *testing.T, k, v string) {
		var a api.TermOpenRequest
		var b api.InputRequest
		var c api.CaptureRequest
		for _, req := range []any{&a, &b, &c} {
			if err := api.DecodeText(url.Values{k: {v}}, req); err != nil && !errors.Is(err, api.ErrBadRequest) {
				t.Fatalf("%s=%q: %v is not a bad_request", k, v, err)
			}
		}
	})
}

// The wire of the requests on the device link, as the table of
// docs/protocol.md names them (and as the link carried them before they were
// the API's types).
func TestLinkWire(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{api.SessionRef{ID: "s"}, `{"id":"s"}`},
		{api.RenameRequest{SessionRef: api.SessionRef{ID: "s"}, Name: "n"}, `{"id":"s","name":"n"}`},
		{api.InputRequest{SessionRef: api.SessionRef{ID: "s"}, Text: "hi", Enter: true}, `{"id":"s","text":"hi","enter":true}`},
		{api.KeysRequest{SessionRef: api.SessionRef{ID: "s"}, Keys: []string{"C-c"}}, `{"id":"s","keys":["C-c"]}`},
		{api.CaptureRequest{SessionRef: api.SessionRef{ID: "s"}, History: 10}, `{"id":"s","history":10}`},
		{api.RunRequest{SessionRef: api.SessionRef{ID: "s"}, Argv: []string{"ls"}, TimeoutMS: 5}, `{"id":"s","argv":["ls"],"timeout_ms":5}`},
		{api.DirsRequest{Path: "/"}, `{"path":"/"}`},
		{api.KillRequest{SessionRef: api.SessionRef{ID: "s"}}, `{"id":"s"}`},
		{api.KillRequest{SessionRef: api.SessionRef{ID: "s"}, RemoveWorktree: true, Force: true}, `{"id":"s","remove_worktree":true,"force":true}`},
		{api.GitDiffRequest{SessionRef: api.SessionRef{ID: "s"}, Staged: true, Path: "a b"}, `{"id":"s","staged":true,"path":"a b"}`},
		{api.ResumableRequest{Dir: "/d"}, `{"dir":"/d"}`},
		{api.DownloadRequest{SessionRef: api.SessionRef{ID: "s"}, URL: "s3://b/k", Path: "f", Overwrite: true, MaxBytes: 9},
			`{"id":"s","url":"s3://b/k","path":"f","overwrite":true,"max_bytes":9}`},
		{api.TermOpenRequest{Stream: 1, SessionRef: api.SessionRef{ID: "s"}, Cols: 80, Rows: 24, Resume: "t1", Offset: 5},
			`{"stream":1,"id":"s","cols":80,"rows":24,"resume":"t1","offset":5}`},
		{api.TermOpenResult{StreamID: "t1", Offset: 5, Reset: true}, `{"stream_id":"t1","offset":5,"reset":true}`},
		{api.TermCloseRequest{Stream: 1}, `{"stream":1}`},
		{api.TermResizeRequest{Stream: 1, Cols: 80, Rows: 24}, `{"stream":1,"cols":80,"rows":24}`},
		{api.Empty{}, `{}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != c.want {
			t.Errorf("%T: %s %v, want %s", c.v, b, err, c.want)
		}
	}
}

// TestDocsNameEveryOp: docs/api.md names every op with its route, and
// docs/protocol.md every op that crosses the device link.
func TestDocsNameEveryOp(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile("../../docs/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	apiDoc, protocol := read("api.md"), read("protocol.md")
	for _, o := range api.Ops() {
		if o.Path != "" {
			row := "| `" + o.Name + "` | `" + o.Method + " " + o.Path + "` |"
			if !strings.Contains(apiDoc, row) {
				t.Errorf("docs/api.md has no row %q", row)
			}
		}
		if o.Scope != api.ScopeLocal && o.Scope != api.ScopeUser && !strings.Contains(protocol, "| `"+o.Name+"` |") {
			t.Errorf("docs/protocol.md does not name op %s", o.Name)
		}
	}
}
