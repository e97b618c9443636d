package notify

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/events"
	"github.com/corral-dev/corral/internal/store"
)

func newNotifier(t *testing.T) (*Notifier, *store.SQLite) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// The test servers are on 127.0.0.1.
	n, err := New(context.Background(), st, Options{AllowPrivate: true})
	if err != nil {
		t.Fatal(err)
	}
	return n, st
}

// pushRequest is what the test push service received.
type pushRequest struct {
	header http.Header
	body   []byte
}

// TestWebPushIsRFC8291 subscribes a "browser" whose endpoint is a local test
// server, sends a notification, and decrypts what arrives exactly as a
// browser would (RFC 8291 aes128gcm), checking the VAPID signature too.
func TestWebPushIsRFC8291(t *testing.T) {
	n, _ := newNotifier(t)
	got := make(chan pushRequest, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- pushRequest{r.Header.Clone(), b}
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()

	// The browser's side: its ECDH key pair and auth secret.
	ua, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	authSecret := make([]byte, 16)
	rand.Read(authSecret)
	var sub Subscription
	sub.Endpoint = srv.URL + "/push/abc"
	sub.Keys.P256dh = base64.RawURLEncoding.EncodeToString(ua.PublicKey().Bytes())
	sub.Keys.Auth = base64.RawURLEncoding.EncodeToString(authSecret)
	ctx := context.Background()
	if err := n.Subscribe(ctx, "u", sub); err != nil {
		t.Fatal(err)
	}

	ev := api.Event{Seq: 7, Type: api.EventSession, Notify: true, Time: time.Now(), Session: &api.Session{
		ID: "s1", Name: "app", Status: api.StatusNeedsInput,
		WaitingFor: &api.Waiting{Kind: "permission", Tool: "Bash", Input: json.RawMessage(`{"command":"rm -rf build"}`)},
	}}
	n.Handle(ctx, "u", ev)
	n.Wait()
	var req pushRequest
	select {
	case req = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("no push arrived")
	}
	if req.header.Get("Content-Encoding") != "aes128gcm" {
		t.Fatalf("content encoding %q", req.header.Get("Content-Encoding"))
	}
	checkVAPID(t, req.header.Get("Authorization"), n.VAPIDPublicKey(), srv.URL)
	plain := decryptAES128GCM(t, req.body, ua, authSecret)
	var m Message
	if err := json.Unmarshal(plain, &m); err != nil {
		t.Fatalf("payload %q: %v", plain, err)
	}
	if m.Title != "app needs you" || m.Body != "Allow Bash: rm -rf build?" || m.SessionID != "s1" || m.URL != "/#/s/s1" {
		t.Fatalf("message %+v", m)
	}
}

// decryptAES128GCM is RFC 8291 section 3.4 and RFC 8188, from the receiving end.
func decryptAES128GCM(t *testing.T, body []byte, ua *ecdh.PrivateKey, authSecret []byte) []byte {
	t.Helper()
	if len(body) < 21 {
		t.Fatalf("body of %d bytes", len(body))
	}
	salt := body[:16]
	rs := binary.BigEndian.Uint32(body[16:20])
	idlen := int(body[20])
	keyid := body[21 : 21+idlen]
	ct := body[21+idlen:]
	if rs < 18 || len(ct) > int(rs) {
		t.Fatalf("record size %d for %d bytes (one record expected)", rs, len(ct))
	}
	asPub, err := ecdh.P256().NewPublicKey(keyid)
	if err != nil {
		t.Fatalf("keyid is not the sender's P-256 key: %v", err)
	}
	secret, err := ua.ECDH(asPub)
	if err != nil {
		t.Fatal(err)
	}
	keyInfo := append(append([]byte("WebPush: info\x00"), ua.PublicKey().Bytes()...), keyid...)
	prkKey, _ := hkdf.Extract(sha256.New, secret, authSecret)
	ikm, _ := hkdf.Expand(sha256.New, prkKey, string(keyInfo), 32)
	prk, _ := hkdf.Extract(sha256.New, ikm, salt)
	cek, _ := hkdf.Expand(sha256.New, prk, "Content-Encoding: aes128gcm\x00", 16)
	nonce, _ := hkdf.Expand(sha256.New, prk, "Content-Encoding: nonce\x00", 12)
	block, _ := aes.NewCipher(cek)
	gcm, _ := cipher.NewGCM(block)
	plain, err := gcm.Open(nil, nonce, ct, nil)
	if err != nil {
		t.Fatalf("decrypt: %v", err)
	}
	// Strip the padding: the last record ends with 0x02 then zeros.
	i := len(plain) - 1
	for i >= 0 && plain[i] == 0 {
		i--
	}
	if i < 0 || plain[i] != 2 {
		t.Fatalf("bad padding delimiter")
	}
	return plain[:i]
}

// checkVAPID verifies the Authorization header: "vapid t=<JWT>, k=<key>"
// with an ES256 JWT for the push service's origin, signed by k.
func checkVAPID(t *testing.T, header, wantKey, origin string) vapidClaims {
	t.Helper()
	if !strings.HasPrefix(header, "vapid ") {
		t.Fatalf("authorization %q", header)
	}
	var tok, k string
	for _, part := range strings.Split(strings.TrimPrefix(header, "vapid "), ",") {
		part = strings.TrimSpace(part)
		switch {
		case strings.HasPrefix(part, "t="):
			tok = part[2:]
		case strings.HasPrefix(part, "k="):
			k = part[2:]
		}
	}
	if k != wantKey {
		t.Fatalf("VAPID key %q, want %q", k, wantKey)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("JWT %q", tok)
	}
	claims, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c vapidClaims
	json.Unmarshal(claims, &c)
	if c.Aud != origin || c.Exp < time.Now().Unix() || c.Sub == "" {
		t.Fatalf("claims %+v", c)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(k)
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	if err != nil {
		t.Fatalf("VAPID key is not a P-256 point: %v", err)
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	if len(sig) != 64 {
		t.Fatalf("signature of %d bytes", len(sig))
	}
	h := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, h[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("VAPID signature does not verify")
	}
	return c
}

// vapidClaims are the claims of a VAPID JWT (RFC 8292).
type vapidClaims struct {
	Aud string `json:"aud"`
	Exp int64  `json:"exp"`
	Sub string `json:"sub"`
}

func TestExpiredSubscriptionIsDropped(t *testing.T) {
	n, st := newNotifier(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) }))
	defer srv.Close()
	ua, _ := ecdh.P256().GenerateKey(rand.Reader)
	var sub Subscription
	sub.Endpoint = srv.URL + "/gone"
	sub.Keys.P256dh = base64.RawURLEncoding.EncodeToString(ua.PublicKey().Bytes())
	sub.Keys.Auth = base64.RawURLEncoding.EncodeToString(make([]byte, 16))
	ctx := context.Background()
	n.Subscribe(ctx, "u", sub)
	n.Handle(ctx, "u", api.Event{Type: api.EventSession, Notify: true, Session: &api.Session{ID: "s", Name: "a", Status: api.StatusReview}})
	n.Wait()
	if subs, _ := st.PushSubscriptions(ctx, "u"); len(subs) != 0 {
		t.Fatalf("a 410 subscription was kept: %+v", subs)
	}
}

func TestWebhookAndLog(t *testing.T) {
	n, st := newNotifier(t)
	type hit struct {
		ct   string
		body map[string]any
	}
	got := make(chan hit, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		json.NewDecoder(r.Body).Decode(&b)
		got <- hit{r.Header.Get("Content-Type"), b}
	}))
	defer srv.Close()
	ctx := context.Background()
	if err := n.SetWebhook(ctx, "u", "ftp://x"); err == nil {
		t.Fatal("accepted a non-http webhook")
	}
	if err := n.SetWebhook(ctx, "u", srv.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	bus := events.New(events.Options{})
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	n.SetBaseURL("http://corral.test:7777/")
	n.FollowUser("u", bus) // before Run: it follows from Run's start
	go func() { n.Run(rctx); close(done) }()
	// Only live moves into needs-input or review notify.
	waitSubscribed(t, bus)
	bus.Update(api.Session{ID: "s1", Name: "app", Status: api.StatusBusy}, api.StatusIdle, false)
	bus.Update(api.Session{ID: "s1", Name: "app", Status: api.StatusReview, LastMessage: "All tests pass."}, api.StatusBusy, true)
	var h hit
	select {
	case h = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("no webhook call")
	}
	if h.ct != "application/json" || h.body["text"] != "app finished: All tests pass. <http://corral.test:7777/#/s/s1|Open in corral>" ||
		h.body["session_id"] != "s1" || h.body["link"] != "http://corral.test:7777/#/s/s1" {
		t.Fatalf("webhook %+v", h)
	}
	// The user's pages get it on the bus, in the same words, with its id
	// in the log.
	var nt *api.Notification
	for deadline := time.Now().Add(5 * time.Second); nt == nil && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		for _, ev := range bus.Recent(10) {
			if ev.Type == api.EventNotification {
				nt = ev.Notification
			}
		}
	}
	if nt == nil || nt.Title != "app finished" || nt.Message != "All tests pass." || nt.ID == 0 || nt.SessionID != "s1" || nt.Reason != "review" {
		t.Fatalf("the notification event: %+v", nt)
	}
	cancel()
	<-done
	n.Wait()
	log, err := st.Notifications(ctx, "u", 10)
	if err != nil || len(log) != 1 || log[0].Reason != "review" || log[0].SessionName != "app" {
		t.Fatalf("log %+v %v", log, err)
	}
	// A new notifier on the same store keeps the keys and the webhook.
	n2, err := New(ctx, st, Options{AllowPrivate: true})
	if err != nil || n2.VAPIDPublicKey() != n.VAPIDPublicKey() || n2.Webhook(ctx, "u") != srv.URL+"/hook" {
		t.Fatalf("reloaded: %v %q", err, n2.Webhook(ctx, "u"))
	}
}

func waitSubscribed(t *testing.T, bus *events.Feed) {
	deadline := time.Now().Add(5 * time.Second)
	for bus.Subscribers() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("notifier did not subscribe")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestMessages(t *testing.T) {
	cases := []struct {
		s           api.Session
		title, body string
	}{
		{api.Session{Name: "a", Device: "laptop", Status: api.StatusReview, Error: "rate_limit", ErrorMessage: "API Error: 429"}, "laptop/a stopped with an error", "API Error: 429"},
		{api.Session{Name: "a", Status: api.StatusNeedsInput, WaitingFor: &api.Waiting{Kind: "question"}}, "a needs you", "Claude asks a question"},
		{api.Session{Name: "a", Status: api.StatusReview}, "a finished", "Ready for review"},
	}
	for _, c := range cases {
		m, ok := MessageFor(api.Event{Type: api.EventSession, Notify: true, Session: &c.s})
		if !ok || m.Title != c.title || m.Body != c.body {
			t.Errorf("%+v -> %+v", c.s, m)
		}
	}
	if _, ok := MessageFor(api.Event{Type: api.EventSession, Notify: false, Session: &api.Session{Status: api.StatusReview}}); ok {
		t.Error("a change without notify made a message")
	}
}

// A needs-input message carries its dialog's id and the answers it can take
// as buttons; a dialog without an id gets none.
func TestMessageActions(t *testing.T) {
	perm := &api.Waiting{DialogID: "d1", Kind: api.DialogPermission, Tool: "Bash", Input: []byte(`{"command":"ls -la"}`)}
	m, ok := MessageFor(api.Event{Type: api.EventSession, Notify: true, Session: &api.Session{ID: "s", Name: "a", Status: api.StatusNeedsInput, WaitingFor: perm}})
	if !ok || m.Body != "Allow Bash: ls -la?" || m.DialogID != "d1" || m.Kind != "permission" ||
		len(m.Actions) != 2 || m.Actions[0] != (Action{Action: "yes", Title: "Allow"}) || m.Actions[1] != (Action{Action: "no", Title: "Deny"}) {
		t.Fatalf("permission: %+v", m)
	}
	q := &api.Waiting{DialogID: "d2", Kind: api.DialogQuestion, Questions: []api.Question{{Question: "Which?"}}, Options: []api.Option{
		{Number: 1, Label: "Red"}, {Number: 2, Label: "Blue"}, {Number: 3, Label: "Type something", Text: true}, {Number: 4, Label: "Chat about this", Chat: true}}}
	m, _ = MessageFor(api.Event{Type: api.EventSession, Notify: true, Session: &api.Session{ID: "s", Name: "a", Status: api.StatusNeedsInput, WaitingFor: q}})
	if len(m.Actions) != 2 || m.Actions[0] != (Action{Action: "option:1", Title: "Red"}) || m.Actions[1] != (Action{Action: "option:2", Title: "Blue"}) {
		t.Fatalf("question: %+v", m.Actions)
	}
	noID := *perm
	noID.DialogID = ""
	m, _ = MessageFor(api.Event{Type: api.EventSession, Notify: true, Session: &api.Session{ID: "s", Name: "a", Status: api.StatusNeedsInput, WaitingFor: &noID}})
	if len(m.Actions) != 0 || m.DialogID != "" {
		t.Fatalf("no dialog id: %+v", m)
	}
}

// Hooks tell of a permission before the screen read names the dialog, and
// the screen may name it before the hook gives the command: the
// notification goes out again as it learns more (its buttons, then its
// command), not for nothing new, and not after the session moved on.
func TestLateActions(t *testing.T) {
	n, _ := newNotifier(t)
	noID := &api.Waiting{Kind: api.DialogPermission, Tool: "Bash"}
	withID := &api.Waiting{DialogID: "d1", Kind: api.DialogPermission, Tool: "Bash"}
	withCmd := &api.Waiting{DialogID: "d1", Kind: api.DialogPermission, Tool: "Bash", Input: []byte(`{"command":"make"}`)}
	ev := func(w *api.Waiting, notify bool) api.Event {
		return api.Event{Type: api.EventSession, Notify: notify, Session: &api.Session{ID: "s", Name: "a", Status: api.StatusNeedsInput, WaitingFor: w}}
	}
	m, _ := MessageFor(ev(noID, true))
	n.noteActions("u", m)
	if _, ok := n.lateActions("other", ev(withID, false)); ok {
		t.Fatal("another user's session")
	}
	if _, ok := n.lateActions("u", ev(noID, false)); ok {
		t.Fatal("nothing new, no buttons")
	}
	m, ok := n.lateActions("u", ev(withID, false))
	if !ok || m.DialogID != "d1" || len(m.Actions) != 2 || m.Tag != "corral-s" || m.Body != "Allow Bash?" {
		t.Fatalf("late: %v %+v", ok, m)
	}
	if _, ok := n.lateActions("u", ev(withID, false)); ok {
		t.Fatal("sent twice")
	}
	if m, ok = n.lateActions("u", ev(withCmd, false)); !ok || m.Body != "Allow Bash: make?" {
		t.Fatalf("the command: %v %+v", ok, m)
	}
	m, _ = MessageFor(ev(noID, true))
	n.noteActions("u", m)
	busy := api.Event{Type: api.EventSession, Session: &api.Session{ID: "s", Name: "a", Status: api.StatusBusy}}
	if _, ok := n.lateActions("u", busy); ok {
		t.Fatal("busy")
	}
	if _, ok := n.lateActions("u", ev(withID, false)); ok {
		t.Fatal("after the session moved on")
	}
}

// The session file can tell of a permission before the hook names its
// tool: the log's entry, first generic, takes the details when they come,
// and Handle hands back the update (not a new notification).
func TestLogTakesLateDetails(t *testing.T) {
	n, _ := newNotifier(t)
	ctx := context.Background()
	ev := func(w *api.Waiting, notify bool) api.Event {
		return api.Event{Type: api.EventSession, Notify: notify, Time: time.Now(), Session: &api.Session{ID: "s", Name: "a", Status: api.StatusNeedsInput, WaitingFor: w}}
	}
	first, ok := n.Handle(ctx, "u", ev(&api.Waiting{DialogID: "d1", Kind: api.DialogPermission}, true))
	if !ok || first.Message != "Allow a tool?" || first.ID == 0 {
		t.Fatalf("first: %v %+v", ok, first)
	}
	// The event carries the push's buttons and dialog, for a page's own
	// notification.
	allowDeny := []Action{{Action: "yes", Title: "Allow"}, {Action: "no", Title: "Deny"}}
	if first.DialogID != "d1" || !slices.Equal(first.Actions, allowDeny) {
		t.Fatalf("first's buttons: %+v", first)
	}
	up, ok := n.Handle(ctx, "u", ev(&api.Waiting{DialogID: "d1", Kind: api.DialogPermission, Tool: "Bash", Input: []byte(`{"command":"make"}`)}, false))
	if !ok || !up.Updated || up.ID != first.ID || up.Message != "Allow Bash: make?" || up.DialogID != "d1" || !slices.Equal(up.Actions, allowDeny) {
		t.Fatalf("update: %v %+v", ok, up)
	}
	log, err := n.Log(ctx, "u", 10)
	if err != nil || len(log) != 1 || log[0].Message != "Allow Bash: make?" {
		t.Fatalf("log: %+v %v", log, err)
	}
	// The same words again: nothing.
	if _, ok := n.Handle(ctx, "u", ev(&api.Waiting{DialogID: "d1", Kind: api.DialogPermission, Tool: "Bash", Input: []byte(`{"command":"make"}`)}, false)); ok {
		t.Error("an update with nothing new")
	}
	n.Wait()
}
