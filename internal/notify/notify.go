// Package notify alerts people when a session needs them: it turns status
// events marked notify into Web Push messages (RFC 8291, VAPID), webhook
// calls (ntfy- or Slack-style) and entries of the notification log that the
// dashboard's bell shows.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/events"
	"github.com/corral-dev/corral/internal/lifetime"
	"github.com/corral-dev/corral/internal/metrics"
	"github.com/corral-dev/corral/internal/netguard"
	"github.com/corral-dev/corral/internal/store"
)

// Keys of the settings the notifier keeps in the store.
const (
	keyVAPIDPublic  = "push.vapid_public"
	keyVAPIDPrivate = "push.vapid_private"
	keyWebhook      = "notify.webhook_url." // + user
)

// Notifier sends notifications.
type Notifier struct {
	store   store.Store
	log     *slog.Logger
	client  *http.Client
	public  string
	private string
	// subscriber is the contact VAPID asks for, as webpush-go takes it.
	subscriber string
	// allowPrivate: targets may be local (Options.AllowPrivate).
	allowPrivate bool
	metrics      *metrics.Metrics

	// sending counts the sends in flight (Handle); sendCtx bounds them and
	// ends sendGrace after Run's context.
	sending     sync.WaitGroup
	sendCtx     context.Context
	cancelSends context.CancelFunc

	// followers are the users' buses followed (FollowUser), on goroutines of
	// the notifier's while Run runs; those given before it are pending.
	followers lifetime.Group
	mu        sync.Mutex
	serving   context.Context
	pending   []follow

	// amu guards awaiting (the sessions notified while they wait on a
	// dialog, keyed user NUL session; bounded by maxAwaiting) and base.
	amu      sync.Mutex
	awaiting map[string]*awaited
	base     string
}

// follow is a user's bus to follow.
type follow struct {
	user string
	bus  *events.Feed
}

// sendGrace is how long Run, at its end, lets the sends in flight finish
// before it cuts them: a daemon stops within a couple of seconds, and the
// notification stays in the log (the dashboard's bell) either way.
const sendGrace = 500 * time.Millisecond

// Options configure a Notifier.
type Options struct {
	Logger *slog.Logger
	// Client sends pushes and webhooks (default: netguard.Client, 10 s
	// timeout, which reaches only public addresses unless AllowPrivate).
	// A Client given here is used as it is.
	Client *http.Client
	// AllowPrivate lets webhooks and pushes reach loopback, private and
	// link-local addresses (--allow-private-webhooks).
	AllowPrivate bool
	// Subject is the VAPID contact (the JWT's sub): an https: URL or a
	// mailto: address that the push services accept (CheckSubject); empty
	// means DefaultSubject.
	Subject string
	// Metrics counts the notifications sent and failed (nil: none).
	Metrics *metrics.Metrics
}

// DefaultSubject is the VAPID subject when none is configured: the
// project's page, which every push service accepts (Apple refuses
// localhost, .local and .invalid subjects).
const DefaultSubject = "https://github.com/corral-dev/corral"

// CheckSubject says whether a VAPID subject will be accepted: an https:
// URL with a host, or mailto: with an address, and in both a name that
// resolves on the internet (Apple's push service refuses localhost, .local,
// .invalid and loopback addresses, with 403 BadJwtToken).
func CheckSubject(s string) error {
	bad := func(why string) error {
		return fmt.Errorf("push subject %q: %s; give --push-subject https://your-host or mailto:you@your-domain", s, why)
	}
	u, err := url.Parse(s)
	if err != nil {
		return bad("not a URL")
	}
	var host string
	switch u.Scheme {
	case "https":
		host = u.Hostname()
	case "mailto":
		local, domain, ok := strings.Cut(u.Opaque, "@")
		if !ok || local == "" || domain == "" || strings.ContainsAny(u.Opaque, ":/?#") {
			return bad("mailto: needs an address, such as mailto:you@example.org")
		}
		host = domain
	default:
		return bad("it must be an https: URL or a mailto: address")
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" {
		return bad("no host")
	}
	if ip, err := netip.ParseAddr(host); err == nil && (ip.IsLoopback() || ip.IsUnspecified() || ip.IsPrivate() || ip.IsLinkLocalUnicast()) {
		return bad("a local address")
	}
	for _, local := range []string{"localhost", "local", "invalid", "internal", "localdomain"} {
		if host == local || strings.HasSuffix(host, "."+local) {
			return bad("a local name, which Apple's push service refuses")
		}
	}
	return nil
}

// subscriber is Subject as webpush-go takes it: an https: URL as it is,
// an address without "mailto:" (the library adds it, and would send
// mailto:mailto:...).
func subscriber(subject string) string {
	if a, ok := strings.CutPrefix(subject, "mailto:"); ok {
		return a
	}
	return subject
}

// New loads the VAPID keys from the store, making them on first run, and
// the webhook setting.
func New(ctx context.Context, st store.Store, opts Options) (*Notifier, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Client == nil {
		opts.Client = netguard.Client(10*time.Second, opts.AllowPrivate)
	}
	if opts.Subject == "" {
		opts.Subject = DefaultSubject
	}
	if err := CheckSubject(opts.Subject); err != nil {
		return nil, err
	}
	n := &Notifier{store: st, log: opts.Logger, client: opts.Client, subscriber: subscriber(opts.Subject), allowPrivate: opts.AllowPrivate, metrics: opts.Metrics}
	n.sendCtx, n.cancelSends = context.WithCancel(context.Background())
	priv, err := st.Get(ctx, keyVAPIDPrivate)
	if errors.Is(err, store.ErrNotFound) {
		p, pub, gerr := webpush.GenerateVAPIDKeys()
		if gerr != nil {
			return nil, fmt.Errorf("make VAPID keys: %w", gerr)
		}
		// Written only if absent, both in one transaction: hubs starting
		// at once on one database end up with one pair, and a retry does
		// not replace live keys.
		kept, err := st.SetIfAbsent(ctx, map[string][]byte{keyVAPIDPublic: []byte(pub), keyVAPIDPrivate: []byte(p)})
		if err != nil {
			return nil, err
		}
		priv = kept[keyVAPIDPrivate]
	} else if err != nil {
		return nil, err
	}
	pub, err := st.Get(ctx, keyVAPIDPublic)
	if err != nil {
		return nil, fmt.Errorf("VAPID public key: %w", err)
	}
	n.public, n.private = string(pub), string(priv)
	return n, nil
}

// VAPIDPublicKey is the key browsers subscribe with (base64url).
func (n *Notifier) VAPIDPublicKey() string { return n.public }

// WebhookKey is the store's key of a user's webhook URL (a hub forgets
// it with the user).
func WebhookKey(user string) string { return keyWebhook + user }

// Webhook returns a user's webhook URL ("" for none). It is read from the
// store each time (one small query per notification), not kept: the
// management commands change it from another process (`hub user rm`).
func (n *Notifier) Webhook(ctx context.Context, user string) string {
	if b, err := n.store.Get(ctx, keyWebhook+user); err == nil {
		return string(b)
	}
	return ""
}

// SetWebhook sets (or with "" clears) a user's webhook URL.
func (n *Notifier) SetWebhook(ctx context.Context, user, raw string) error {
	raw = strings.TrimSpace(raw)
	if raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return api.Errorf(api.CodeBadRequest, "webhook must be an http(s) URL, got %q", raw)
		}
		if err := n.checkTarget(u); err != nil {
			return api.Errorf(api.CodeBadRequest, "webhook: %v", err)
		}
	}
	var err error
	if raw == "" {
		err = n.store.Delete(ctx, keyWebhook+user)
	} else {
		err = n.store.Set(ctx, keyWebhook+user, []byte(raw))
	}
	return err
}

// Subscription is a browser's PushSubscription.toJSON() (the
// push_subscribe op's request).
type Subscription = api.PushSubscription

// Log is a user's notification log, newest first, at most limit entries.
func (n *Notifier) Log(ctx context.Context, user string, limit int) ([]api.LoggedNotification, error) {
	list, err := n.store.Notifications(ctx, user, limit)
	if err != nil {
		return nil, err
	}
	out := make([]api.LoggedNotification, len(list))
	for i, e := range list {
		out[i] = api.LoggedNotification{ID: e.ID, Time: e.Time, Device: e.Device, SessionID: e.SessionID,
			SessionName: e.SessionName, Reason: e.Reason, Message: e.Message}
	}
	return out, nil
}

// Subscribe stores a browser's subscription.
func (n *Notifier) Subscribe(ctx context.Context, user string, s Subscription) error {
	u, err := url.Parse(s.Endpoint)
	if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return api.Errorf(api.CodeBadRequest, "push subscription: endpoint must be an http(s) URL")
	}
	if err := n.checkTarget(u); err != nil {
		return api.Errorf(api.CodeBadRequest, "push subscription: %v", err)
	}
	if s.Keys.P256dh == "" || s.Keys.Auth == "" || len(s.Keys.P256dh) > 200 || len(s.Keys.Auth) > 100 || len(s.Endpoint) > 2048 {
		return api.Errorf(api.CodeBadRequest, "push subscription: missing or oversized keys")
	}
	err = n.store.PutPushSubscription(ctx, store.PushSubscription{
		Endpoint: s.Endpoint, P256dh: s.Keys.P256dh, Auth: s.Keys.Auth, User: user, CreatedAt: time.Now(),
	})
	if errors.Is(err, store.ErrOtherUser) {
		// The same browser, subscribed for someone who did not log out:
		// it must make a new subscription (the UI unsubscribes and asks
		// again), so that pushes never go to whoever had it before.
		return api.Errorf(api.CodeConflict, "this push endpoint belongs to another user's subscription; unsubscribe it in the browser and subscribe again")
	}
	return err
}

// checkTarget refuses, when it is saved, a URL whose host is a local
// address or name; other names are checked when they are dialed.
func (n *Notifier) checkTarget(u *url.URL) error {
	if n.allowPrivate {
		return nil
	}
	return netguard.CheckHost(strings.Trim(u.Hostname(), "[]"))
}

// Unsubscribe forgets one of a user's subscriptions (another user's is
// left alone).
func (n *Notifier) Unsubscribe(ctx context.Context, user, endpoint string) error {
	return n.store.DeleteUserPushSubscription(ctx, user, endpoint)
}

// Message is what one notification says.
type Message struct {
	Title     string `json:"title"`
	Body      string `json:"body"`
	SessionID string `json:"session_id"`
	Device    string `json:"device,omitempty"`
	Reason    string `json:"reason"`
	URL       string `json:"url"`
	Tag       string `json:"tag"`
	// Link is URL made absolute with the dashboard's address (SetBaseURL),
	// for webhooks; empty while the address is not known.
	Link string `json:"link,omitempty"`
	// DialogID and Kind name the dialog a needs-input notification is
	// about; an action answers that dialog only (a newer one refuses it as
	// stale_dialog).
	DialogID string `json:"dialog_id,omitempty"`
	Kind     string `json:"kind,omitempty"`
	// Actions are the answers a notification offers as buttons (the
	// service worker shows as many as the platform allows).
	Actions []Action `json:"actions,omitempty"`
	// relog is, on a message sent again with new words, the log entry
	// that logged the old ones (lateActions), to be updated.
	relog int64
}

// Action is a notification's button (the push's and the event's alike).
type Action = api.NotificationAction

// maxActions bounds a message's buttons (Chrome shows two, macOS more).
const maxActions = 4

// actionsFor are the answers a dialog can take from a button: Allow and
// Deny for a permission, the plain options of a one-question, single-choice
// question. A dialog without an id gets none (an answer must name it).
func actionsFor(w *api.Waiting) []Action {
	if w == nil || w.DialogID == "" {
		return nil
	}
	switch w.Kind {
	case api.DialogPermission:
		return []Action{{Action: "yes", Title: "Allow"}, {Action: "no", Title: "Deny"}}
	case api.DialogQuestion:
		if w.MultiSelect || w.Current < 0 || len(w.Questions) > 1 {
			return nil
		}
		var out []Action
		for _, o := range w.Options {
			if o.Text || o.Chat || o.Number <= 0 || strings.TrimSpace(o.Label) == "" {
				continue
			}
			out = append(out, Action{Action: fmt.Sprintf("option:%d", o.Number), Title: clip(o.Label, 40)})
			if len(out) == maxActions {
				break
			}
		}
		return out
	}
	return nil
}

// MessageFor describes an event that should alert a person: it names the
// machine (when there are several), the session and the reason.
func MessageFor(ev api.Event) (Message, bool) {
	s := ev.Session
	if ev.Type != api.EventSession || !ev.Notify || s == nil {
		return Message{}, false
	}
	name := s.Name
	if s.Device != "" {
		name = s.Device + "/" + s.Name
	}
	m := Message{SessionID: s.ID, Device: s.Device, Reason: string(s.Status), URL: "/#/s/" + url.PathEscape(s.ID), Tag: "corral-" + s.ID}
	switch s.Status {
	case api.StatusNeedsInput:
		m.Title = name + " needs you"
		m.Body = "Waiting for input"
		if w := s.WaitingFor; w != nil {
			m.Body = w.Describe()
		}
	case api.StatusReview:
		if s.Error != "" {
			m.Title = name + " stopped with an error"
			m.Body = firstNonEmpty(s.ErrorMessage, s.Error)
		} else {
			m.Title = name + " finished"
			m.Body = firstNonEmpty(s.LastMessage, "Ready for review")
		}
	default:
		return Message{}, false
	}
	m.Body = clip(m.Body, 200)
	if s.Status == api.StatusNeedsInput && s.WaitingFor != nil {
		m.DialogID, m.Kind, m.Actions = s.WaitingFor.DialogID, s.WaitingFor.Kind, actionsFor(s.WaitingFor)
	}
	return m, true
}

// actionsLater is the message of a session that waits, when its dialog has
// buttons: what lateActions sends again.
func actionsLater(ev api.Event) (Message, bool) {
	s := ev.Session
	if ev.Type != api.EventSession || s == nil || s.Status != api.StatusNeedsInput || len(actionsFor(s.WaitingFor)) == 0 {
		return Message{}, false
	}
	notify := ev
	notify.Notify = true
	return MessageFor(notify)
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Handle sends the notifications an event of user's sessions calls for: to
// that user's subscriptions and webhook only. It logs the notification at
// once, sends in the background, and returns it (false: the event calls
// for none).
func (n *Notifier) Handle(ctx context.Context, user string, ev api.Event) (api.Notification, bool) {
	m, ok := MessageFor(ev)
	if !ok {
		m, ok := n.lateActions(user, ev)
		if !ok {
			return api.Notification{}, false
		}
		n.send(user, m, false)
		if m.relog == 0 {
			return api.Notification{}, false
		}
		// The log said less than is known now (the session file told of
		// the dialog before the hook named the tool): its entry says it
		// all, and the pages replace theirs.
		if err := n.store.UpdateNotification(ctx, user, m.relog, m.Body); err != nil {
			n.log.Error("notification log", "err", err)
			return api.Notification{}, false
		}
		return api.Notification{ID: m.relog, Time: ev.Time, Device: m.Device, SessionID: m.SessionID, SessionName: ev.Session.Name,
			Reason: m.Reason, Title: m.Title, Message: m.Body, Updated: true, DialogID: m.DialogID, Actions: m.Actions}, true
	}
	out := api.Notification{Time: ev.Time, Device: m.Device, SessionID: m.SessionID, SessionName: ev.Session.Name, Reason: m.Reason,
		Title: m.Title, Message: m.Body, DialogID: m.DialogID, Actions: m.Actions}
	id, err := n.store.AddNotification(ctx, store.Notification{
		User: user, Time: ev.Time, Device: m.Device, SessionID: m.SessionID, SessionName: ev.Session.Name, Reason: m.Reason, Message: m.Body,
	})
	if err != nil {
		n.log.Error("notification log", "err", err)
	} else {
		out.ID = id
	}
	n.noteLogged(user, m, out.ID)
	n.send(user, m, true)
	return out, true
}

// send pushes m, and posts it to the webhook too when hook, in the
// background (Wait, Run).
func (n *Notifier) send(user string, m Message, hook bool) {
	if m.URL != "" {
		if base := n.baseURL(); base != "" {
			m.Link = base + m.URL
		}
	}
	n.sending.Add(1)
	go func() {
		defer n.sending.Done()
		// Not ctx: a follower that stops does not cut what it handed over
		// (Run gives it sendGrace).
		ctx, cancel := context.WithTimeout(n.sendCtx, 30*time.Second)
		defer cancel()
		n.push(ctx, user, m)
		if hook {
			n.callWebhook(ctx, user, m)
		}
	}()
}

// Test sends user a test notification, pushed and posted to the webhook
// (not logged).
func (n *Notifier) Test(user string) {
	n.send(user, Message{Title: "corral", Body: "A test notification: this device gets corral's alerts.", Reason: "test",
		URL: "/", Tag: "corral-test"}, true)
}

// maxAwaiting bounds the sessions remembered as waiting (noteActions).
const maxAwaiting = 1024

// maxUpdates bounds the pushes sent again for one needs-input notification.
const maxUpdates = 3

// awaited is what was last sent for a session that waits on a dialog.
type awaited struct {
	dialog, body string
	actions      int
	updates      int
	// logID is the notification log's entry of it (0: not logged).
	logID int64
}

// noteActions remembers a needs-input notification, so that what the
// screen and the hooks tell of its dialog afterwards (its id, and so its
// buttons; the tool's command) can follow it (lateActions).
func (n *Notifier) noteActions(user string, m Message) { n.noteLogged(user, m, 0) }

// noteLogged is noteActions for a notification logged as entry id.
func (n *Notifier) noteLogged(user string, m Message, id int64) {
	k := user + "\x00" + m.SessionID
	n.amu.Lock()
	defer n.amu.Unlock()
	if m.Reason != string(api.StatusNeedsInput) {
		delete(n.awaiting, k)
		return
	}
	if n.awaiting == nil {
		n.awaiting = map[string]*awaited{}
	}
	if _, ok := n.awaiting[k]; ok || len(n.awaiting) < maxAwaiting {
		n.awaiting[k] = &awaited{dialog: m.DialogID, body: m.Body, actions: len(m.Actions), logID: id}
	}
}

// lateActions: a session notified while it waits now says more of its
// dialog (the id that gives it buttons, or the tool's command): the
// notification again, replacing the first (same tag), with buttons only.
// At most maxUpdates times; any other state of the session forgets it.
func (n *Notifier) lateActions(user string, ev api.Event) (Message, bool) {
	s := ev.Session
	if ev.Type != api.EventSession || s == nil {
		return Message{}, false
	}
	k := user + "\x00" + s.ID
	n.amu.Lock()
	defer n.amu.Unlock()
	a := n.awaiting[k]
	if a == nil {
		return Message{}, false
	}
	if s.Status != api.StatusNeedsInput {
		delete(n.awaiting, k)
		return Message{}, false
	}
	m, ok := actionsLater(ev)
	if !ok || m.DialogID == a.dialog && m.Body == a.body && len(m.Actions) == a.actions {
		return Message{}, false
	}
	if m.Body != a.body {
		m.relog = a.logID
	}
	a.dialog, a.body, a.actions = m.DialogID, m.Body, len(m.Actions)
	if a.updates++; a.updates >= maxUpdates {
		delete(n.awaiting, k)
	}
	return m, true
}

// SetBaseURL gives the dashboard's address (scheme://host[:port]), which
// makes the webhooks' links absolute.
func (n *Notifier) SetBaseURL(base string) {
	n.amu.Lock()
	defer n.amu.Unlock()
	n.base = strings.TrimRight(base, "/")
}

func (n *Notifier) baseURL() string {
	n.amu.Lock()
	defer n.amu.Unlock()
	return n.base
}

// Wait waits for notifications being sent (tests).
func (n *Notifier) Wait() { n.sending.Wait() }

// Run follows the users' buses given to FollowUser until ctx ends, then
// returns once every follower has, and the notifications being sent have
// been sent, or cut after sendGrace. Call it once.
func (n *Notifier) Run(ctx context.Context) error {
	n.mu.Lock()
	if n.serving != nil {
		n.mu.Unlock()
		return errors.New("notify: Run called twice")
	}
	n.serving = ctx
	pending := n.pending
	n.pending = nil
	for _, f := range pending {
		n.followers.Go(func() { n.Follow(ctx, f.user, f.bus) })
	}
	n.mu.Unlock()
	<-ctx.Done()
	n.followers.Wait()
	cut := time.AfterFunc(sendGrace, n.cancelSends)
	defer cut.Stop()
	n.sending.Wait()
	n.cancelSends()
	return nil
}

// FollowUser follows a user's bus (Follow) on a goroutine of the notifier's
// while Run runs (from its start, if it has not started). It returns at
// once: the hub calls it with its lock held (hub.Options.OnUser).
func (n *Notifier) FollowUser(user string, bus *events.Feed) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.serving == nil {
		n.pending = append(n.pending, follow{user, bus})
		return
	}
	ctx := n.serving
	n.followers.Go(func() { n.Follow(ctx, user, bus) })
}

func (n *Notifier) push(ctx context.Context, user string, m Message) {
	subs, err := n.store.PushSubscriptions(ctx, user)
	if err != nil {
		n.log.Error("push subscriptions", "err", err)
		return
	}
	payload, _ := json.Marshal(m)
	for _, s := range subs {
		resp, err := webpush.SendNotificationWithContext(ctx, payload, &webpush.Subscription{
			Endpoint: s.Endpoint, Keys: webpush.Keys{P256dh: s.P256dh, Auth: s.Auth},
		}, &webpush.Options{
			HTTPClient: n.client, Subscriber: n.subscriber, VAPIDPublicKey: n.public, VAPIDPrivateKey: n.private,
			TTL: 3600, Urgency: webpush.UrgencyHigh, Topic: topic(m.Tag),
		})
		if err != nil {
			n.log.Warn("web push", "endpoint", host(s.Endpoint), "err", err)
			n.metrics.Notified(metrics.ChannelPush, err)
			continue
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		n.metrics.Notified(metrics.ChannelPush, refused(resp.StatusCode))
		switch {
		case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
			// The browser dropped the subscription: so do we.
			n.store.DeletePushSubscription(ctx, s.Endpoint)
			n.log.Info("push subscription expired", "endpoint", host(s.Endpoint))
		case resp.StatusCode >= 300:
			n.log.Warn("web push refused", "endpoint", host(s.Endpoint), "status", resp.StatusCode)
		}
	}
}

// topic is a Web Push Topic (at most 32 URL-safe characters): a newer push
// for the same session replaces an undelivered older one.
func topic(tag string) string {
	var b strings.Builder
	for _, c := range tag {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteRune(c)
		}
	}
	t := b.String()
	return t[:min(len(t), 32)]
}

func host(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil {
		return u.Host
	}
	return "?"
}

// callWebhook posts a notification to the configured URL. ntfy gets a plain
// text body with its headers (title, click, tags); anything else gets JSON
// with a Slack-compatible "text" plus the structured fields.
func (n *Notifier) callWebhook(ctx context.Context, user string, m Message) {
	hook := n.Webhook(ctx, user)
	if hook == "" {
		return
	}
	var req *http.Request
	var err error
	if isNtfy(hook) {
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, hook, strings.NewReader(m.Body))
		if err == nil {
			req.Header.Set("Title", m.Title)
			if m.Link != "" {
				req.Header.Set("Click", m.Link)
			}
			req.Header.Set("Tags", map[string]string{"needs-input": "bell", "review": "white_check_mark"}[m.Reason])
			if m.Reason == "needs-input" {
				req.Header.Set("Priority", "high")
			}
		}
	} else {
		body, _ := json.Marshal(struct {
			Text string `json:"text"`
			Message
		}{Text: webhookText(m), Message: m})
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, hook, bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	if err != nil {
		n.log.Warn("webhook", "err", err)
		return
	}
	req.Header.Set("User-Agent", "corral")
	resp, err := n.client.Do(req)
	if err != nil {
		n.log.Warn("webhook", "err", err)
		n.metrics.Notified(metrics.ChannelWebhook, err)
		return
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	n.metrics.Notified(metrics.ChannelWebhook, refused(resp.StatusCode))
	if resp.StatusCode >= 300 {
		n.log.Warn("webhook refused", "status", resp.StatusCode)
	}
}

// refused is the error of an HTTP status that is no success, for metrics.
func refused(status int) error {
	if status >= 300 {
		return fmt.Errorf("status %d", status)
	}
	return nil
}

// webhookText is a Slack-style message: the title, the body, and the link
// (Slack's <url|label> form) when the dashboard's address is known.
func webhookText(m Message) string {
	t := m.Title + ": " + m.Body
	if m.Link != "" {
		t += " <" + m.Link + "|Open in corral>"
	}
	return t
}

func isNtfy(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Host == "ntfy.sh" || strings.HasPrefix(u.Host, "ntfy."))
}

// Follow handles the events of one user's bus from now on until ctx ends.
// A subscription that fell behind resumes from the last event it handled,
// so no notification is skipped.
func (n *Notifier) Follow(ctx context.Context, user string, bus *events.Feed) {
	last := bus.Seq()
	for ctx.Err() == nil {
		sub := bus.Subscribe(last)
		stop := context.AfterFunc(ctx, sub.Close)
		for ev := range sub.C() {
			if ev.Type == api.EventSnapshot {
				// The ring no longer held what was missed; nothing to replay.
				last = ev.Seq
				continue
			}
			last = ev.Seq
			if nt, ok := n.Handle(ctx, user, *ev); ok {
				// The pages of the user show it in the same words
				// (a notification event, docs/web-protocol.md).
				bus.Notify(nt)
			}
		}
		stop()
		sub.Close()
	}
}
