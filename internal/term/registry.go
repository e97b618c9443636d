package term

import (
	"sync"
	"time"
)

// Registry keeps the streams of every session, so a viewer that lost its
// connection can come back to its stream within the grace period.
//
// A stream that asked for a redraw stays until a fresh stream of its
// session replaces it (TakeRedrawn, Options.Replaces), or for
// redrawnGrace if none comes.
type Registry struct {
	grace time.Duration

	mu      sync.Mutex
	streams map[string]entry
}

type entry struct {
	session string
	s       *Stream
}

// redrawnGrace is how long a stream that asked for a redraw waits for the
// fresh stream that replaces it.
const redrawnGrace = 5 * time.Second

// NewRegistry makes a registry; idle streams live for grace.
func NewRegistry(grace time.Duration) *Registry {
	return &Registry{grace: grace, streams: map[string]entry{}}
}

// Add registers a stream of a session.
func (r *Registry) Add(session string, s *Stream) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.streams[s.ID] = entry{session, s}
}

// Get finds a live stream of a session.
func (r *Registry) Get(session, id string) (*Stream, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.streams[id]
	if !ok || e.session != session {
		return nil, false
	}
	if closed, _ := e.s.Closed(); closed || e.s.isRedrawn() {
		return nil, false
	}
	return e.s, true
}

// TakeRedrawn removes the streams of a session that asked for a redraw
// and returns them, for the fresh stream to replace (Options.Replaces).
func (r *Registry) TakeRedrawn(session string) []*Stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*Stream
	for id, e := range r.streams {
		if e.session == session && e.s.isRedrawn() {
			out = append(out, e.s)
			delete(r.streams, id)
		}
	}
	return out
}

// CheckSizes makes every stream ask its window's size again
// (Stream.CheckSize): a window changed size, and which one it was does not
// matter, since asking costs one query per stream and streams are few.
func (r *Registry) CheckSizes() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.streams {
		e.s.CheckSize()
	}
}

// Count returns the number of streams (metrics, tests).
func (r *Registry) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.streams)
}

// Sweep closes streams that ended or that nobody read for the grace period.
func (r *Registry) Sweep(now time.Time) {
	r.mu.Lock()
	var drop []*Stream
	for id, e := range r.streams {
		closed, _ := e.s.Closed()
		grace := r.grace
		if e.s.isRedrawn() {
			grace = min(grace, redrawnGrace)
		}
		if closed || e.s.idleFor(now) > grace {
			drop = append(drop, e.s)
			delete(r.streams, id)
		}
	}
	r.mu.Unlock()
	for _, s := range drop {
		s.Close()
	}
}

// CloseSession closes every stream of a session.
func (r *Registry) CloseSession(session string) {
	r.mu.Lock()
	var drop []*Stream
	for id, e := range r.streams {
		if e.session == session {
			drop = append(drop, e.s)
			delete(r.streams, id)
		}
	}
	r.mu.Unlock()
	for _, s := range drop {
		s.Close()
	}
}

// Close closes everything, all streams at once (each waits for its attach
// command to exit), and returns once they are closed.
func (r *Registry) Close() {
	r.mu.Lock()
	all := r.streams
	r.streams = map[string]entry{}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range all {
		wg.Go(func() { e.s.Close() })
	}
	wg.Wait()
}
