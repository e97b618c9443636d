package hub

import (
	"context"
	"os"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/version"
)

// notificationLogLimit bounds the entries GET /api/v1/notifications
// answers with.
const notificationLogLimit = 100

// addUserOps answers the ops on the asking user's own data: the
// dashboard's config, the notification log, settings and push
// subscriptions. The hub holds the users, so they are its own; with no
// notifier (Options.Notifier) they say notifications are off.
func (h *Hub) addUserOps(m *backend.Mux) {
	backend.Handle(m, api.OpWebConfig, h.webConfig)
	backend.Handle(m, api.OpNotifications, func(ctx context.Context, _ api.Empty) ([]api.LoggedNotification, error) {
		u, err := user(ctx)
		if err != nil {
			return nil, err
		}
		if h.o.Notifier == nil {
			return []api.LoggedNotification{}, nil
		}
		return h.o.Notifier.Log(ctx, u, notificationLogLimit)
	})
	backend.Handle(m, api.OpSettings, func(ctx context.Context, req api.SettingsRequest) (api.Settings, error) {
		u, err := h.notifyUser(ctx)
		if err != nil {
			return api.Settings{}, err
		}
		if req.WebhookURL != nil {
			if err := h.o.Notifier.SetWebhook(ctx, u, *req.WebhookURL); err != nil {
				return api.Settings{}, err
			}
		}
		return api.Settings{WebhookURL: h.o.Notifier.Webhook(ctx, u)}, nil
	})
	backend.HandleNone(m, api.OpPushSubscribe, func(ctx context.Context, req api.PushSubscription) error {
		u, err := h.notifyUser(ctx)
		if err != nil {
			return err
		}
		return h.o.Notifier.Subscribe(ctx, u, req)
	})
	backend.HandleNone(m, api.OpPushUnsubscribe, func(ctx context.Context, req api.PushUnsubscribeRequest) error {
		u, err := h.notifyUser(ctx)
		if err != nil {
			return err
		}
		return h.o.Notifier.Unsubscribe(ctx, u, req.Endpoint)
	})
	backend.HandleNone(m, api.OpPushTest, func(ctx context.Context, _ api.Empty) error {
		u, err := h.notifyUser(ctx)
		if err != nil {
			return err
		}
		h.o.Notifier.Test(u)
		return nil
	})
}

// notifyUser is the asking user, when notifications are on.
func (h *Hub) notifyUser(ctx context.Context) (string, error) {
	u, err := user(ctx)
	if err != nil {
		return "", err
	}
	if h.o.Notifier == nil {
		return "", api.Errorf(api.CodeUnavailable, "notifications are off")
	}
	return u, nil
}

func (h *Hub) webConfig(ctx context.Context, _ api.Empty) (api.WebConfig, error) {
	u, err := user(ctx)
	if err != nil {
		return api.WebConfig{}, err
	}
	b := version.Get()
	host, _ := os.Hostname()
	cfg := api.WebConfig{Version: b.Version, Commit: b.Commit, BuildDate: b.Date, Hostname: host}
	if home, err := os.UserHomeDir(); err == nil {
		cfg.Home = home
	}
	if n := h.o.Notifier; n != nil {
		cfg.VAPIDPublicKey = n.VAPIDPublicKey()
		cfg.WebhookURL = n.Webhook(ctx, u)
	}
	return cfg, nil
}
