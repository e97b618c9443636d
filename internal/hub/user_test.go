package hub

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/identity"
	"github.com/corral-dev/corral/internal/notify"
	"github.com/corral-dev/corral/internal/store"
)

// TestUserOps: the user ops answer the asking user's own data, keep each
// user's apart, and say so when notifications are off.
func TestUserOps(t *testing.T) {
	ctx := context.Background()
	alice, bob := identity.With(ctx, "alice"), identity.With(ctx, "bob")

	off, err := New(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := backend.Call(ctx, off, api.OpWebConfig, api.Empty{}); !errors.Is(err, api.ErrUnauthorized) {
		t.Errorf("config without a user: %v", err)
	}
	if cfg, err := backend.Call(alice, off, api.OpWebConfig, api.Empty{}); err != nil || cfg.Version == "" || cfg.VAPIDPublicKey != "" {
		t.Errorf("config with notifications off: %+v %v", cfg, err)
	}
	if l, err := backend.Call(alice, off, api.OpNotifications, api.Empty{}); err != nil || l == nil || len(l) != 0 {
		t.Errorf("log with notifications off: %#v %v", l, err)
	}
	for name, err := range map[string]error{
		"settings":  func() error { _, err := backend.Call(alice, off, api.OpSettings, api.SettingsRequest{}); return err }(),
		"push_test": func() error { _, err := backend.Call(alice, off, api.OpPushTest, api.Empty{}); return err }(),
	} {
		if !errors.Is(err, api.ErrUnavailable) {
			t.Errorf("%s with notifications off: %v", name, err)
		}
	}

	st, err := store.Open(filepath.Join(t.TempDir(), "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	n, err := notify.New(ctx, st, notify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(ctx, Options{Notifier: n})
	if err != nil {
		t.Fatal(err)
	}
	hook := "https://ntfy.sh/alice-topic"
	if s, err := backend.Call(alice, h, api.OpSettings, api.SettingsRequest{WebhookURL: &hook}); err != nil || s.WebhookURL != hook {
		t.Fatalf("set the webhook: %+v %v", s, err)
	}
	if s, err := backend.Call(alice, h, api.OpSettings, api.SettingsRequest{}); err != nil || s.WebhookURL != hook {
		t.Errorf("settings without a change: %+v %v", s, err)
	}
	local := "http://127.0.0.1:9/hook"
	if _, err := backend.Call(alice, h, api.OpSettings, api.SettingsRequest{WebhookURL: &local}); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("a webhook on a local address: %v", err)
	}
	if cfg, err := backend.Call(alice, h, api.OpWebConfig, api.Empty{}); err != nil || cfg.WebhookURL != hook || len(cfg.VAPIDPublicKey) < 80 {
		t.Errorf("alice's config: %+v %v", cfg, err)
	}
	if cfg, err := backend.Call(bob, h, api.OpWebConfig, api.Empty{}); err != nil || cfg.WebhookURL != "" {
		t.Errorf("bob's config shows %+v %v", cfg, err)
	}

	sub := api.PushSubscription{Endpoint: "https://push.example.com/alice", Keys: api.PushKeys{P256dh: "BKey", Auth: "secret"}}
	if _, err := backend.Call(alice, h, api.OpPushSubscribe, sub); err != nil {
		t.Fatalf("alice subscribes: %v", err)
	}
	if _, err := backend.Call(bob, h, api.OpPushSubscribe, sub); !errors.Is(err, api.ErrConflict) {
		t.Errorf("bob takes alice's endpoint: %v", err)
	}
	if _, err := backend.Call(alice, h, api.OpPushUnsubscribe, api.PushUnsubscribeRequest{}); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("unsubscribe without an endpoint: %v", err)
	}
	if _, err := backend.Call(bob, h, api.OpPushUnsubscribe, api.PushUnsubscribeRequest{Endpoint: sub.Endpoint}); err != nil {
		t.Errorf("bob's unsubscribe: %v", err)
	}
	if subs, err := st.PushSubscriptions(ctx, "alice"); err != nil || len(subs) != 1 {
		t.Fatalf("alice's subscriptions after bob's unsubscribe: %+v %v", subs, err)
	}

	if _, err := st.AddNotification(ctx, store.Notification{User: "alice", SessionID: "s1", SessionName: "work", Reason: "needs_input", Message: "Allow Bash?"}); err != nil {
		t.Fatal(err)
	}
	if l, err := backend.Call(alice, h, api.OpNotifications, api.Empty{}); err != nil || len(l) != 1 || l[0].SessionName != "work" || l[0].Message != "Allow Bash?" || l[0].ID == 0 {
		t.Errorf("alice's log: %+v %v", l, err)
	}
	if l, err := backend.Call(bob, h, api.OpNotifications, api.Empty{}); err != nil || len(l) != 0 {
		t.Errorf("bob's log: %+v %v", l, err)
	}
}
