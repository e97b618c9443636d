package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/client"
)

var errStop = errors.New("stop")

// waitStarted follows the event stream until session id has left
// "starting", or the timeout passes.
func waitStarted(ctx context.Context, c *client.Client, id string, timeout time.Duration) (api.Session, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last api.Session
	check := func(s api.Session) bool {
		last = s
		return s.ID == id && s.Status != api.StatusStarting
	}
	err := c.StreamEvents(ctx, 0, func(ev api.Event) error {
		switch ev.Type {
		case api.EventSnapshot:
			for _, s := range ev.Sessions {
				if check(s) {
					return errStop
				}
			}
		case api.EventSession:
			if ev.Session != nil && check(*ev.Session) {
				return errStop
			}
		case api.EventRemoved:
			if ev.ID == id {
				return fmt.Errorf("session %s went away while starting", id)
			}
		}
		return nil
	})
	if errors.Is(err, errStop) {
		return last, nil
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return last, fmt.Errorf("session %s still starting after %v", id, timeout)
	}
	return last, err
}
