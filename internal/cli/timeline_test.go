package cli

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/httpapi"
)

// opsBackend serves canned answers through the real API table.
type opsBackend struct{ *backend.Mux }

func (opsBackend) Subscribe(context.Context, uint64) (backend.Subscription, error) {
	return nil, api.Errorf(api.CodeUnavailable, "no events here")
}

func (opsBackend) OpenTerminal(context.Context, string, int, int, string, uint64) (backend.Terminal, uint64, bool, error) {
	return nil, 0, false, api.Errorf(api.CodeUnavailable, "no terminals here")
}

func TestTimelineCommand(t *testing.T) {
	in := newInstall(t)
	m := backend.NewMux()
	backend.Handle(m, api.OpSessions, func(context.Context, api.Empty) ([]api.Session, error) {
		return []api.Session{{ID: "s1abcdefghij", Name: "work"}}, nil
	})
	var asked string
	backend.Handle(m, api.OpTimeline, func(_ context.Context, r api.TimelineRequest) (api.Timeline, error) {
		asked = r.ID
		return api.Timeline{Cursor: "e:7", Reset: true, Items: []api.TimelineItem{
			{ID: "1", Kind: api.TimelinePrompt, Text: "fix the build\nplease", DurationMS: 83_400,
				Tokens: &api.TurnTokens{Input: 1000, CacheRead: 500, Output: 20, Responses: 2, CostUSD: 0.4249}},
			{ID: "2", Kind: api.TimelineThinking, Text: "look at make"},
			{ID: "3", Kind: api.TimelineTool, Tool: &api.ToolCall{Name: "Bash", Input: json.RawMessage(`{"command":"make\nall"}`), Done: true, Result: "\nok " + evil + "\nmore"}},
			{ID: "4", Kind: api.TimelineTool, Tool: &api.ToolCall{Name: "Edit", Input: json.RawMessage(`{"file_path":"/a.go"}`), Done: true, IsError: true, Result: "no match"}},
			{ID: "5", Kind: api.TimelineTool, Tool: &api.ToolCall{Name: "Read", Input: json.RawMessage(`{}`)}},
			{ID: "6", Kind: api.TimelineText, Text: "Done.\n\nAll green."},
			{ID: "7", Kind: api.TimelineInterrupt, Text: "Request interrupted by user"},
			{ID: "8", Kind: api.TimelineCompaction, Text: "auto"},
			{ID: "9", Kind: api.TimelineAPIError, Status: 529, Text: "Overloaded"},
			{ID: "10", Kind: api.TimelineCommand, Text: "/compact"},
		}}, nil
	})
	hs := httptest.NewServer(httpapi.New(opsBackend{m}, httpapi.Options{}))
	t.Cleanup(hs.Close)
	hubArgs := []string{"--hub", hs.URL, "--token", "t"}

	out := in.must(append(hubArgs, "timeline", "s1")...)
	if asked != "s1abcdefghij" {
		t.Errorf("asked for the timeline of %q", asked)
	}
	want := `> fix the build
  please
  (took 1m23s, 1500 in, 20 out, $0.42)

  (thinking) look at make

* Bash(make)
  -> ok \x1b]52;c;cHduZWQ=\x07\x1b[2J\u009b31m\u009d0;t\u009c\u202eexe.txt\x1b]0;pwned\x07

* Edit(/a.go)
  error: no match

* Read
  ... running

Done.

All green.

[Request interrupted by user]

--- conversation compacted (auto) ---

API error 529: Overloaded

/compact
`
	if out != want {
		t.Errorf("timeline printed:\n%s\nwant:\n%s", out, want)
	}
	if bad := unsafeIn(out); len(bad) > 0 {
		t.Errorf("timeline printed %q raw", bad)
	}

	var tl api.Timeline
	if err := json.Unmarshal([]byte(in.must(append(hubArgs, "timeline", "--json", "work")...)), &tl); err != nil || tl.Cursor != "e:7" || len(tl.Items) != 10 || !strings.Contains(tl.Items[2].Tool.Result, evil) {
		t.Errorf("timeline --json: %+v %v", tl, err)
	}
}

// TestEveryOpHasACommand: every operation with an API route can be done
// from the command line, but a browser's own ("": the page's config, and
// push subscriptions, which only a browser's push service makes).
func TestEveryOpHasACommand(t *testing.T) {
	commands := map[string]string{
		"version": "version", "sessions": "ls", "session": "ls", "devices": "devices",
		"create": "new", "dirs": "dirs", "resumable": "resumable",
		"kill": "kill", "rename": "rename", "input": "send", "answer": "answer", "restart": "restart",
		"keys": "keys", "capture": "capture", "run": "run", "viewed": "viewed", "download": "download",
		"timeline": "timeline", "git_status": "git", "git_diff": "git",
		"notifications": "notifications", "push_test": "notifications", "settings": "webhook",
		"web_config": "", "push_subscribe": "", "push_unsubscribe": "",
	}
	root := newRoot(&env{getenv: func(string) string { return "" }})
	for _, op := range api.Ops() {
		if op.Path == "" {
			continue
		}
		name, ok := commands[op.Name]
		if !ok {
			t.Errorf("op %s: no command does it (add one, and a line here)", op.Name)
			continue
		}
		if name == "" {
			continue
		}
		if c, _, err := root.Find([]string{name}); err != nil || c.Name() != name {
			t.Errorf("op %s: no command %q", op.Name, name)
		}
	}
}
