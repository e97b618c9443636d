package hub

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/link"
	"github.com/corral-dev/corral/internal/notify"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// evilDevice is a device written here, on the real link protocol over an
// in-memory link (the very bytes a WebSocket carries), attached to h.
type evilDevice struct {
	t      *testing.T
	c      link.Conn
	closed chan int // the close code the hub sent
}

func attachEvil(t *testing.T, h *Hub, info DeviceIdentity) *evilDevice {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hubEnd, devEnd := link.Pipe()
	done := make(chan struct{})
	go func() { h.ServeLocal(ctx, info, hubEnd); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	if _, err := link.ClientHello(ctx, devEnd, func(link.Msg) (link.Msg, error) { return link.Msg{Hostname: "evil"}, nil }); err != nil {
		t.Fatal(err)
	}
	e := &evilDevice{t: t, c: devEnd, closed: make(chan int, 1)}
	go func() {
		for {
			if _, _, err := devEnd.Read(context.Background()); err != nil {
				e.closed <- link.CloseStatus(err)
				return
			}
		}
	}()
	return e
}

func (e *evilDevice) send(m link.Msg) {
	e.t.Helper()
	b, err := link.EncodeMsg(m)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.c.Write(ctx, link.Text, b); err != nil {
		e.t.Fatal(err)
	}
}

func evilSession(id, name string) api.Session {
	return api.Session{ID: id, Name: name, Dir: "/x", Kind: api.KindShell, Status: api.StatusIdle}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestHostileDeviceSessions: a device that announces 3,000 sessions in its
// sync and 30,000 more in events has 1,000 listed and persisted; sessions
// with a forged id or status are refused, and names, dirs and texts are
// cleaned of control and bidi characters and cut to their lengths.
func TestHostileDeviceSessions(t *testing.T) {
	_, ids, st, acc := newDevicesHub(t, 1)
	logs := &testio.SyncBuffer{}
	h, err := New(context.Background(), Options{Store: st, Accounts: acc, EventRate: 1e6, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	e := attachEvil(t, h, DeviceIdentity{ID: ids[0], Name: "box0", Owner: "alice"})
	var list []api.Session
	for i := range 3000 {
		list = append(list, evilSession(fmt.Sprintf("s%d", i), "n"))
	}
	e.send(link.Msg{T: link.TypeSync, Seq: 1, Sessions: list})
	for i := range 30000 {
		s := evilSession(fmt.Sprintf("e%d", i), "n")
		e.send(link.Msg{T: link.TypeEvent, Seq: uint64(2 + i), Event: &api.Event{Type: api.EventSession, Session: &s}})
	}
	bad := []api.Session{
		evilSession("x\x1b]52;c;cHduZWQ=\a", "osc"), // an id that is no id
		{ID: "badstatus", Name: "n", Kind: api.KindShell, Status: "pwned"},
		{ID: "badkind", Name: "n", Kind: "root", Status: api.StatusIdle},
	}
	dirty := evilSession("s1", "re\x1b[31mname\u202egnp.exe\u0085"+strings.Repeat("é", 400))
	dirty.Dir = "/tmp/\x07bell"
	dirty.LastMessage = "line one\nline two\x1b]0;title\a" + strings.Repeat("z", 40<<10)
	dirty.WaitingFor = &api.Waiting{Kind: "permission", Tool: "Write", Input: []byte(`"` + strings.Repeat("a", 300<<10) + `"`)}
	for i, s := range append(bad, dirty) {
		e.send(link.Msg{T: link.TypeEvent, Seq: uint64(40000 + i), Event: &api.Event{Type: api.EventSession, Session: &s}})
	}
	bus := h.Bus("alice")
	waitFor(t, "the cleaned session", func() bool {
		s, ok := bus.Session("s1")
		return ok && strings.HasPrefix(s.Name, "re[31mname")
	})
	if n := len(bus.Sessions()); n != DefaultMaxSessions {
		t.Fatalf("%d sessions listed for one device, want %d", n, DefaultMaxSessions)
	}
	for _, s := range bad {
		if _, ok := bus.Session(s.ID); ok {
			t.Errorf("malformed session %q listed", s.ID)
		}
	}
	s, _ := bus.Session("s1")
	if strings.ContainsAny(s.Name+s.Dir+s.LastMessage, "\x1b\a\u202e\u0085") || len(s.Name) > maxLabel || len(s.LastMessage) > maxText ||
		!strings.HasPrefix(s.LastMessage, "line one\nline two") || s.WaitingFor == nil || s.WaitingFor.Input != nil || s.WaitingFor.Tool != "Write" {
		t.Errorf("not cleaned: name %q dir %q message %d bytes, waiting %+v", s.Name, s.Dir, len(s.LastMessage), s.WaitingFor)
	}
	h.Flush()
	saved, err := st.LoadDeviceSessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, r := range saved {
		if r.DeviceID == ids[0] {
			rows++
		}
	}
	if rows != DefaultMaxSessions {
		t.Errorf("%d sessions persisted, want %d", rows, DefaultMaxSessions)
	}
	if n := strings.Count(logs.String(), "more sessions than the hub keeps"); n != 1 {
		t.Errorf("%d warnings about the cap, want one", n)
	}
	// A hub started on the database lists no more either.
	h2, err := New(context.Background(), Options{Store: st, Accounts: acc})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(h2.Bus("alice").Sessions()); n != DefaultMaxSessions {
		t.Errorf("%d sessions after a restart", n)
	}
}

// TestHostileDeviceEventFlood: a device over its event rate has its events
// dropped, with one log line, and one that keeps on is cut off with 1008.
func TestHostileDeviceEventFlood(t *testing.T) {
	_, ids, st, acc := newDevicesHub(t, 1)
	logs := &testio.SyncBuffer{}
	h, err := New(context.Background(), Options{Store: st, Accounts: acc, EventRate: 10, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	e := attachEvil(t, h, DeviceIdentity{ID: ids[0], Name: "box0", Owner: "alice"})
	e.send(link.Msg{T: link.TypeSync, Seq: 1, Sessions: []api.Session{evilSession("s1", "n0")}})
	var code int
	sent := 0
flood:
	for i := range 3 * eventBurst {
		s := evilSession("s1", fmt.Sprintf("n%d", i+1))
		b, _ := link.EncodeMsg(link.Msg{T: link.TypeEvent, Seq: uint64(2 + i), Event: &api.Event{Type: api.EventSession, Session: &s}})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := e.c.Write(ctx, link.Text, b)
		cancel()
		if err != nil {
			break
		}
		sent++
		select {
		case code = <-e.closed:
			break flood
		default:
		}
	}
	if code == 0 {
		select {
		case code = <-e.closed:
		case <-time.After(20 * time.Second):
			t.Fatalf("a device that sent %d events at once was not cut off", sent)
		}
	}
	if code != link.StatusPolicy {
		t.Fatalf("closed with %d, want %d", code, link.StatusPolicy)
	}
	if n := strings.Count(logs.String(), "faster than its limit"); n != 1 {
		t.Errorf("%d log lines about dropped events, want one", n)
	}
	s, _ := h.Bus("alice").Session("s1")
	if s.Name == fmt.Sprintf("n%d", sent) {
		t.Errorf("the last of %d events was applied: nothing was dropped", sent)
	}
}

// FuzzCleanSession: whatever a device sends, a session that is kept has a
// valid id and status, and strings of valid UTF-8 without control or bidi
// characters, within their lengths.
func FuzzCleanSession(f *testing.F) {
	f.Add("abc", "idle", "name\x1b[31m", "/dir\u202e", "msg\n\x07")
	f.Add("ABC", "busy", "\xff\xfe", "", "")
	f.Fuzz(func(t *testing.T, id, status, name, dir, msg string) {
		s, err := cleanSession(api.Session{ID: id, Status: api.Status(status), Name: name, Dir: dir, LastMessage: msg,
			WaitingFor: &api.Waiting{Message: msg, Title: name, Options: []api.Option{{Label: name}}},
			Git:        &api.GitSummary{Root: dir, Branch: name, Error: msg, Changed: -len(msg)},
			Worktree:   &api.SessionWorktree{Path: dir, Branch: name},
			Usage:      api.Usage{CostDay: name, CostToday: -float64(len(msg)), TodayUnpriced: -len(dir)}})
		if err != nil {
			return
		}
		if u := s.Usage; u.CostToday < 0 || u.TodayUnpriced < 0 || u.CostDay != "" && len(u.CostDay) != len(time.DateOnly) {
			t.Fatalf("usage %+v", u)
		}
		if !validSessionID(s.ID) || !s.Status.Valid() || s.Git.Changed < 0 {
			t.Fatalf("kept %q %q %+v", s.ID, s.Status, s.Git)
		}
		for _, v := range []string{s.Name, s.Dir, s.WaitingFor.Options[0].Label, s.Git.Root, s.Git.Branch, s.Worktree.Path, s.Worktree.Branch} {
			if !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return dropRune(r, false) }) || len(v) > maxPath {
				t.Fatalf("label %q not clean", v)
			}
		}
		for _, v := range []string{s.LastMessage, s.WaitingFor.Message, s.WaitingFor.Title, s.Git.Error} {
			if !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return dropRune(r, true) }) || len(v) > maxText {
				t.Fatalf("text %q not clean", v)
			}
		}
	})
}

// TestRemovedUserLeavesNoNotifications: a user removed and added again
// under the same name does not inherit the old one's push subscriptions,
// webhook or notification log, even in a hub that was running meanwhile
// (the removal is made by `hub user rm`, another process).
func TestRemovedUserLeavesNoNotifications(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	acc := NewAccounts(st)
	if _, err := acc.AddUser(ctx, "carol", ""); err != nil {
		t.Fatal(err)
	}
	n, err := notify.New(ctx, st, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.SetWebhook(ctx, "carol", "https://ntfy.sh/old-carol"); err != nil {
		t.Fatal(err)
	}
	if err := st.PutPushSubscription(ctx, store.PushSubscription{Endpoint: "https://push.example.com/old-carol", P256dh: "k", Auth: "a", User: "carol"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddNotification(ctx, store.Notification{User: "carol", SessionID: "s", SessionName: "secret-project", Reason: "review"}); err != nil {
		t.Fatal(err)
	}
	if n.Webhook(ctx, "carol") == "" {
		t.Fatal("no webhook")
	}
	if err := NewAccounts(st).RemoveUser(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if _, err := acc.AddUser(ctx, "carol", ""); err != nil {
		t.Fatal(err)
	}
	subs, _ := st.PushSubscriptions(ctx, "carol")
	log, _ := st.Notifications(ctx, "carol", 10)
	if w := n.Webhook(ctx, "carol"); w != "" || len(subs) != 0 || len(log) != 0 {
		t.Fatalf("the new carol inherited webhook %q, subscriptions %+v, log %+v", w, subs, log)
	}
}
