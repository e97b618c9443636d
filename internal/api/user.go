package api

import "time"

// WebConfig is what the dashboard reads once it is logged in: the
// server's build and host, the public key of its Web Push, and the user's
// webhook. An empty field is not known (or notifications are off).
type WebConfig struct {
	Version string `json:"version,omitempty"`
	// Commit and BuildDate (RFC 3339) are the build's, when stamped.
	Commit    string `json:"commit,omitempty"`
	BuildDate string `json:"build_date,omitempty"`
	Hostname  string `json:"hostname,omitempty"`
	// Home is the server's home directory: the UI shortens paths to ~.
	Home string `json:"home,omitempty"`
	// VAPIDPublicKey is the applicationServerKey of a push subscription.
	VAPIDPublicKey string `json:"vapid_public_key,omitempty"`
	WebhookURL     string `json:"webhook_url,omitempty"`
}

// LoggedNotification is an entry of the user's notification log.
type LoggedNotification struct {
	ID          int64     `json:"id"`
	Time        time.Time `json:"time"`
	Device      string    `json:"device,omitempty"`
	SessionID   string    `json:"session_id"`
	SessionName string    `json:"session_name"`
	Reason      string    `json:"reason" ts:"Status"`
	Message     string    `json:"message,omitempty"`
}

// SettingsRequest changes the user's settings; a field left out stays as
// it is.
type SettingsRequest struct {
	// WebhookURL is where notifications are also POSTed (ntfy or Slack
	// style); "" turns the webhook off.
	WebhookURL *string `json:"webhook_url,omitempty"`
}

// Settings are the user's settings.
type Settings struct {
	WebhookURL string `json:"webhook_url"`
}

// PushSubscription is a browser's PushSubscription.toJSON().
type PushSubscription struct {
	Endpoint string   `json:"endpoint"`
	Keys     PushKeys `json:"keys"`
}

// PushKeys are a push subscription's keys.
type PushKeys struct {
	P256dh string `json:"p256dh"`
	Auth   string `json:"auth"`
}

// PushUnsubscribeRequest names the subscription to forget.
type PushUnsubscribeRequest struct {
	Endpoint string `json:"endpoint"`
}

// Validate refuses what no server could do.
func (r PushUnsubscribeRequest) Validate() error {
	if r.Endpoint == "" {
		return Errorf(CodeBadRequest, `want {"endpoint": ...}`)
	}
	return nil
}
