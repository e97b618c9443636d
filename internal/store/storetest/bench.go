package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/store"
)

// Bench measures what a hub does most against a store: checking a
// browser's cookie (every request) and saving a batch of device session
// changes (the group commit of internal/hub's save queue).
func Bench(b *testing.B, newDB func(testing.TB) DB) {
	b.Run("WebSessionBySecret", func(b *testing.B) {
		s := openB(b, newDB(b))
		u := store.User{ID: "id-alice", Name: "alice", CreatedAt: t0}
		if err := s.AddUser(ctx, u); err != nil {
			b.Fatal(err)
		}
		now := time.Now()
		for i := range 50 {
			ws := store.WebSession{ID: fmt.Sprint("s", i), UserID: u.ID, CreatedAt: now, LastSeen: now, ExpiresAt: now.Add(time.Hour)}
			if err := s.AddWebSession(ctx, ws, fmt.Sprint("h", i), 50); err != nil {
				b.Fatal(err)
			}
		}
		for i := 0; b.Loop(); i++ {
			if _, err := s.WebSessionBySecret(ctx, fmt.Sprint("h", i%50)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("SaveDeviceSessions/10x10", func(b *testing.B) {
		s := openB(b, newDB(b))
		if err := s.AddUser(ctx, store.User{ID: "id-alice", Name: "alice", CreatedAt: t0}); err != nil {
			b.Fatal(err)
		}
		var ids []string
		for d := range 10 {
			dev := store.DeviceRecord{ID: fmt.Sprint("dev", d), Name: fmt.Sprint("m", d), Owner: "alice", CreatedAt: t0}
			if err := s.AddDevice(ctx, dev, ""); err != nil {
				b.Fatal(err)
			}
			ids = append(ids, dev.ID)
		}
		data := []byte(`{"id":"x","name":"a session","dir":"/home/alice/src/project","status":"busy","last_message":"` +
			fmt.Sprintf("%0200d", 0) + `"}`)
		for i := 0; b.Loop(); i++ {
			changes := make([]store.DeviceSessionChange, 0, len(ids))
			for _, id := range ids {
				c := store.DeviceSessionChange{DeviceID: id}
				for k := range 10 {
					c.Put = append(c.Put, store.DeviceSession{SessionID: fmt.Sprint(id, "-s", k), Data: data})
				}
				changes = append(changes, c)
			}
			if _, err := s.SaveDeviceSessions(ctx, changes); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func openB(b *testing.B, db DB) store.Store {
	b.Helper()
	s, err := db.Open(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}
