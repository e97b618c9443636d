package agent

import (
	"log/slog"
	"sync/atomic"

	"golang.org/x/time/rate"
)

// warner logs warnings about untrusted input (bad hook deliveries): any
// process of the user can send them, as fast as it likes.
type warner struct {
	log        *slog.Logger
	warns      *rate.Limiter
	suppressed atomic.Int64
}

// warn logs a warning about untrusted input, at most about one a second
// after a burst; the ones left out are counted in the next.
func (a *warner) warn(msg string, args ...any) {
	if !a.warns.Allow() {
		a.suppressed.Add(1)
		return
	}
	if n := a.suppressed.Swap(0); n > 0 {
		args = append(args, "suppressed_before", n)
	}
	a.log.Warn(msg, args...)
}
