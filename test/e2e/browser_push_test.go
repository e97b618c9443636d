package e2e

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/corral-dev/corral/internal/api"
)

// pushService is a local Web Push service: it takes what corral sends to a
// subscription, and decrypts it with the subscription's keys (RFC 8291),
// as a browser's push service and the browser would.
type pushService struct {
	t    *testing.T
	srv  *httptest.Server
	key  *ecdh.PrivateKey
	auth []byte
	got  chan []byte
}

func newPushService(t *testing.T) *pushService {
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p := &pushService{t: t, key: key, auth: make([]byte, 16), got: make(chan []byte, 32)}
	rand.Read(p.auth)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 8192))
		select {
		case p.got <- b:
		default:
		}
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// subscription is what the page's PushSubscription.toJSON() would say.
func (p *pushService) subscription() map[string]any {
	b64 := base64.RawURLEncoding.EncodeToString
	return map[string]any{"endpoint": p.srv.URL + "/push/1", "keys": map[string]string{"p256dh": b64(p.key.PublicKey().Bytes()), "auth": b64(p.auth)}}
}

// next waits for a push whose decrypted payload cond accepts.
func (p *pushService) next(d time.Duration, what string, cond func(map[string]any) bool) []byte {
	p.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case body := <-p.got:
			plain, err := decryptPush(body, p.key, p.auth)
			if err != nil {
				p.t.Fatalf("push: %v", err)
			}
			var m map[string]any
			if json.Unmarshal(plain, &m) == nil && cond(m) {
				return plain
			}
		case <-deadline:
			p.t.Fatalf("no push: %s", what)
		}
	}
}

// decryptPush is RFC 8291 section 3.4 and RFC 8188 from the receiving end
// (internal/notify's test does the same).
func decryptPush(body []byte, ua *ecdh.PrivateKey, authSecret []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, fmt.Errorf("body of %d bytes", len(body))
	}
	salt, idlen := body[:16], int(body[20])
	if len(body) < 21+idlen {
		return nil, errors.New("short header")
	}
	_ = binary.BigEndian.Uint32(body[16:20])
	keyid, ct := body[21:21+idlen], body[21+idlen:]
	asPub, err := ecdh.P256().NewPublicKey(keyid)
	if err != nil {
		return nil, err
	}
	secret, err := ua.ECDH(asPub)
	if err != nil {
		return nil, err
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
		return nil, err
	}
	i := len(plain) - 1
	for i >= 0 && plain[i] == 0 {
		i--
	}
	if i < 0 || plain[i] != 2 {
		return nil, errors.New("bad padding delimiter")
	}
	return plain[:i], nil
}

// TestBrowserPushAnswer approves a permission from a notification's button:
// corral pushes to a real subscription (a local push service, decrypted as
// a browser would), the push reaches the service worker (DevTools delivers
// it, as the browser's push service would), the worker shows Allow and Deny,
// and a press answers through the answer op with the dialog's id. The same
// button pressed again, once the dialog is gone, answers nothing and says so.
func TestBrowserPushAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	h.stopServe(syscall.SIGTERM)
	// The test's push service listens on 127.0.0.1.
	h.serveArgs = []string{"--root", h.proj, "--allow-private-webhooks"}
	h.startServe()
	push := newPushService(t)
	ctx := browser(t)
	base := h.webURL()
	u, _ := url.Parse(base)
	origin := u.Scheme + "://" + u.Host

	within(t, ctx, 30*time.Second, "login",
		chromedp.Navigate(base),
		chromedp.WaitVisible(css(`[data-testid="new-session"]`)))
	within(t, ctx, 10*time.Second, "allow notifications", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, chromedp.FromContext(ctx).Browser, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: cdpbrowser.PermissionSettingGranted, Origin: origin})
		return err
	}))
	ready := get(t, ctx, 20*time.Second, "the service worker", chromedp.Evaluate[bool](
		`navigator.serviceWorker.ready.then((r) => !!r.active)`, chromedp.EvalAwaitPromise))
	if !ready {
		t.Fatal("no active service worker")
	}
	// The server's side of subscribing, as Settings' "Enable push" does.
	sub, _ := json.Marshal(push.subscription())
	status := get(t, ctx, 10*time.Second, "subscribe", chromedp.Evaluate[int](fmt.Sprintf(
		`fetch('/api/v1/push/subscriptions', {method: 'POST', headers: {'Content-Type': 'application/json',
		  'X-Corral-CSRF': document.cookie.split('; ').find((c) => c.startsWith('corral_csrf=')).slice(12)}, body: %q}).then((r) => r.status)`,
		string(sub)), chromedp.EvalAwaitPromise))
	if status != http.StatusCreated {
		t.Fatalf("subscribe: %d", status)
	}
	// Settings' "Send a test" reaches the subscription.
	within(t, ctx, 10*time.Second, "send a test",
		chromedp.Click(css(`button[aria-label="Settings"]`)),
		chromedp.WaitVisible(css(`[data-testid="send-test-notification"]`)),
		chromedp.Click(css(`[data-testid="send-test-notification"]`)))
	push.next(20*time.Second, "the test notification", func(m map[string]any) bool { return m["tag"] == "corral-test" })
	within(t, ctx, 5*time.Second, "close settings", chromedp.KeyEvent("\x1b"), chromedp.WaitNotPresent(css(`dialog[data-testid="settings"]`)))
	var regID serviceworker.RegistrationID
	within(t, ctx, 10*time.Second, "the worker's registration", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		ev, err := chromedp.WaitEvent(serviceworker.WorkerRegistrationUpdated, func(ev serviceworker.EventWorkerRegistrationUpdated) bool {
			for _, r := range ev.Registrations {
				if !r.IsDeleted && strings.HasPrefix(r.ScopeURL, origin) {
					regID = r.RegistrationID
					return true
				}
			}
			return false
		}, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, serviceworker.Enable, cdp.Empty{})
			return err
		}))(ctx, tg)
		_ = ev
		return err
	}))

	// A session asks to run a tool.
	id := h.newSession()
	h.send(id, "RUNTOOL from a notification")
	h.waitStatus(id, api.StatusNeedsInput, 60*time.Second)
	// Hooks and the screen tell of the dialog in either order: the push
	// goes out again as it learns the buttons and the command.
	payload := push.next(30*time.Second, "a needs-input push with buttons and the command", func(m map[string]any) bool {
		a, _ := m["actions"].([]any)
		body, _ := m["body"].(string)
		return m["session_id"] == id && m["dialog_id"] != nil && len(a) == 2 && strings.Contains(body, "created_by_tool")
	})
	var msg struct {
		Title, Body, DialogID string
		Actions               []struct{ Action, Title string }
	}
	json.Unmarshal(payload, &msg)
	var pm map[string]any
	json.Unmarshal(payload, &pm)
	msg.DialogID, _ = pm["dialog_id"].(string)
	if !strings.Contains(msg.Title, "needs you") || !strings.Contains(msg.Body, "Bash") || !strings.Contains(msg.Body, "created_by_tool") {
		t.Errorf("push text: %q / %q", msg.Title, msg.Body)
	}
	if msg.Actions[0].Title != "Allow" || msg.Actions[1].Title != "Deny" {
		t.Errorf("buttons: %+v", msg.Actions)
	}
	if cur := h.lsOne(id).WaitingFor; cur == nil || cur.DialogID != msg.DialogID {
		t.Fatalf("the push names dialog %q, the session shows %+v", msg.DialogID, cur)
	}

	// No window of corral's is open: the worker shows the push itself (a
	// focused one would show its own). DevTools keeps the worker running.
	swCtx := workerContext(t, ctx, origin)
	within(t, ctx, 10*time.Second, "leave the page", chromedp.Navigate("about:blank"))
	waitFor(t, 15*time.Second, "no corral window focused", func() bool {
		c, cancel := context.WithTimeout(swCtx, 5*time.Second)
		defer cancel()
		n, err := chromedp.Run(c, chromedp.Evaluate[int](
			`self.clients.matchAll({type: 'window', includeUncontrolled: true}).then((cs) => cs.filter((c) => c.visibilityState === 'visible' && c.focused).length)`,
			chromedp.EvalAwaitPromise))
		return err == nil && n == 0
	})
	// Only the push's notification counts: close any the page showed.
	clear := func() {
		get(t, swCtx, 10*time.Second, "close the notifications", chromedp.Evaluate[bool](
			`self.registration.getNotifications().then((ns) => { ns.forEach((n) => n.close()); return true; })`, chromedp.EvalAwaitPromise))
	}
	deliver := func() {
		within(t, ctx, 10*time.Second, "deliver the push", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, serviceworker.DeliverPushMessage, serviceworker.DeliverPushMessageParams{
				Origin: origin, RegistrationID: regID, Data: string(payload)})
			return err
		}))
	}
	clear()
	deliver()
	notes := func(what string, cond func(string) bool) string {
		t.Helper()
		var last string
		// An answer's report waits for the answer op, which may read the
		// screen first (slow under the race detector and a loaded machine).
		for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			last = get(t, swCtx, 5*time.Second, "notifications", chromedp.Evaluate[string](
				`self.registration.getNotifications().then((ns) => JSON.stringify(ns.map((n) => ({title: n.title, body: n.body, actions: (n.actions || []).map((a) => a.title)}))))`,
				chromedp.EvalAwaitPromise))
			if cond(last) {
				return last
			}
		}
		t.Fatalf("%s: the worker shows %s", what, last)
		return ""
	}
	notes("Allow and Deny shown", func(s string) bool { return strings.Contains(s, `"actions":["Allow","Deny"]`) })
	click := func(action string) {
		get(t, swCtx, 10*time.Second, "press "+action, chromedp.Evaluate[bool](fmt.Sprintf(
			`self.registration.getNotifications().then((ns) => { const n = ns.find((x) => x.actions && x.actions.length);
			  if (!n) return false; self.dispatchEvent(new NotificationEvent('notificationclick', {notification: n, action: %q})); return true; })`,
			action), chromedp.EvalAwaitPromise))
	}
	click("yes")
	// The answer reached the dialog: the tool runs, and the notification says so.
	waitFor(t, 30*time.Second, "the approved tool ran", func() bool {
		_, err := os.Stat(filepath.Join(h.proj, "created_by_tool"))
		return err == nil
	})
	notes("the answer reported", func(s string) bool { return strings.Contains(s, `"body":"Answered:`) })
	h.waitStatus(id, api.StatusReview, 60*time.Second)

	// The same notification again, its dialog long gone: the press is refused.
	clear()
	deliver()
	notes("Allow and Deny shown again", func(s string) bool { return strings.Contains(s, `"actions":["Allow","Deny"]`) })
	click("yes")
	notes("the stale press reported", func(s string) bool { return strings.Contains(s, `"body":"Not answered:`) })
	if st := h.lsOne(id).Status; st == api.StatusNeedsInput || st == api.StatusBusy {
		t.Errorf("a stale press changed the session: %s", st)
	}
}

// workerContext attaches to origin's service worker.
func workerContext(t *testing.T, ctx context.Context, origin string) context.Context {
	t.Helper()
	var id target.ID
	waitFor(t, 15*time.Second, "the service worker's target", func() bool {
		ts, err := chromedp.Targets(ctx)
		if err != nil {
			return false
		}
		for _, ti := range ts {
			if ti.Type == "service_worker" && strings.HasPrefix(ti.URL, origin) {
				id = ti.TargetID
				return true
			}
		}
		return false
	})
	swCtx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(id))
	t.Cleanup(cancel)
	// Attach now, with a context that lives as long as the test: chromedp
	// ties a worker target's reader to the context of its first action.
	if err := chromedp.Do(swCtx); err != nil {
		t.Fatalf("attach to the service worker: %v", err)
	}
	return swCtx
}
