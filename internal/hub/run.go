package hub

import (
	"context"

	"github.com/corral-dev/corral/internal/api"
)

var errStopped = api.Errorf(api.CodeUnavailable, "the hub is shutting down")

// Run serves until ctx ends: it owns the devices' connections (Attach,
// LinkHandler) and looks for devices revoked behind its back (CutRevoked).
// When ctx ends it closes every connection (1001, going away: the agents
// reconnect to the next hub), refuses new ones, and returns once every
// connection's handler and its own loops have returned and the devices'
// sessions are saved (Flush), with Flush's error. Call it once.
func (h *Hub) Run(ctx context.Context) error {
	if h.o.Accounts != nil {
		h.g.Go(func() { h.CutRevoked(h.stop) })
	}
	clDone := h.runCluster()
	<-ctx.Done()
	h.log.Debug("hub stopping", "devices", h.online())
	// Every connection's context ends with h.stop: its Peer closes the
	// link and returns.
	h.stopFn()
	h.g.Wait()
	// Then the cluster layer writes the devices offline and stops.
	clDone()
	return h.Flush()
}

// online counts the devices connected now.
func (h *Hub) online() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, d := range h.devices {
		if d.peer != nil {
			n++
		}
	}
	return n
}

// RevokeDevice revokes a user's device (Accounts.RevokeDevice) and cuts
// its link at once: `corral hub device revoke` asks the running hub
// through its admin socket (AdminHandler).
func (h *Hub) RevokeDevice(ctx context.Context, owner, name string) (Registration, error) {
	if h.o.Accounts == nil {
		return Registration{}, api.Errorf(api.CodeBadRequest, "this hub takes no devices")
	}
	d, err := h.o.Accounts.RevokeDevice(ctx, owner, name)
	if err != nil {
		return d, err
	}
	h.log.Warn("device revoked; cutting it off", "device", d.String())
	h.kick(d.ID, d.Owner, true)
	return d, nil
}

// RemoveUser removes a user (Accounts.RemoveUser) and cuts their devices'
// links at once.
func (h *Hub) RemoveUser(ctx context.Context, name string) error {
	if h.o.Accounts == nil {
		return api.Errorf(api.CodeBadRequest, "this hub has no users")
	}
	devs, err := h.o.Accounts.Devices(ctx, name)
	if err != nil {
		return err
	}
	if err := h.o.Accounts.RemoveUser(ctx, name); err != nil {
		return err
	}
	for _, d := range devs {
		h.log.Warn("device's user removed; cutting it off", "device", d.String())
		h.kick(d.ID, d.Owner, true)
	}
	return nil
}
