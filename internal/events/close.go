package events

// Close ends every subscription as if its reader fell behind
// (ErrFellBehind): its reader subscribes again, to whatever bus replaced
// this one (a hub replica's bus remade from the event log).
func (b *Feed) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		s.err = ErrFellBehind
		delete(b.subs, s)
		close(s.ch)
	}
}
