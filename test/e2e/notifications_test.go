package e2e

import (
	"strings"
	"testing"
)

// TestNotificationsCommands: the user's notification settings and log,
// which the dashboard shows, are ops on the socket too.
func TestNotificationsCommands(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	if out := strings.TrimSpace(h.corral("notifications", "--json")); out != "[]" {
		t.Errorf("a fresh log: %q", out)
	}
	h.corral("webhook", "https://ntfy.sh/corral-e2e")
	if out := strings.TrimSpace(h.corral("webhook")); out != "https://ntfy.sh/corral-e2e" {
		t.Errorf("the webhook reads %q", out)
	}
	if out, err := h.corralErr("webhook", "http://127.0.0.1:9/hook"); err == nil || !strings.Contains(out, "--allow-private-webhooks") {
		t.Errorf("a webhook on a local address: %v %s", err, out)
	}
	h.corral("webhook", "--clear")
	if out := strings.TrimSpace(h.corral("webhook")); out != "" {
		t.Errorf("after --clear the webhook reads %q", out)
	}
	h.corral("notifications", "--test")
}
