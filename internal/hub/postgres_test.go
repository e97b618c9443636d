package hub

import (
	"context"
	"sync"
	"testing"

	"github.com/corral-dev/corral/internal/link"
	"github.com/corral-dev/corral/internal/store/postgres"
)

// TestTwoHubsOnePostgres: two hub processes on one PostgreSQL are one hub
// to a device: the same hub id to sign for, the same accounts. Two
// machines bringing one enrolment token at once, one to each hub, get one
// enrolment between them; the winner's key is the device's on both, and
// the loser's is on neither.
func TestTwoHubsOnePostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pg.Database(t)
	open := func() *linkHub {
		st, err := postgres.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return newLinkHubOn(t, st)
	}
	a := open()
	if _, err := a.acc.AddUser(ctx, "alice", ""); err != nil {
		t.Fatal(err)
	}
	b := open()
	if a.h.id != b.h.id {
		t.Fatalf("two hubs on one database have ids %s and %s", a.h.id, b.h.id)
	}
	for round := range 3 {
		name := []string{"laptop", "desk", "vm"}[round]
		_, tok, err := a.acc.AddDevice(ctx, "alice", name, 0)
		if err != nil {
			t.Fatal(err)
		}
		keys := [2]*dev{{t: t, key: testKeyIn(t), token: tok}, {t: t, key: testKeyIn(t), token: tok}}
		hubs := [2]*linkHub{a, b}
		var wg sync.WaitGroup
		var welcomed [2]bool
		for i := range 2 {
			wg.Go(func() {
				c, w, _, err := keys[i].dial(hubs[i])
				if err == nil {
					welcomed[i] = w.Enrolled
					c.Close(link.StatusNormal, "")
				}
			})
		}
		wg.Wait()
		if welcomed[0] == welcomed[1] {
			t.Fatalf("round %d: one token enrolled %v on the two hubs, want exactly one", round, welcomed)
		}
		win, lose := keys[0], keys[1]
		if welcomed[1] {
			win, lose = lose, win
		}
		for _, h := range hubs {
			if d, ok := h.acc.DeviceByKey(ctx, win.key.PublicString()); !ok || d.Name != name {
				t.Errorf("round %d: the winner's key on a hub: %+v %v", round, d, ok)
			}
			if _, ok := h.acc.DeviceByKey(ctx, lose.key.PublicString()); ok {
				t.Errorf("round %d: the loser's key was bound too", round)
			}
		}
	}
}
