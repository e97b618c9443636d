package hub

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/store"
	"github.com/corral-dev/corral/internal/termsafe"
)

// TestNamesRefuseControls: user and device names with C0 or C1 controls or
// bidi controls are refused, with an error that names the rule and is
// itself safe to print.
func TestNamesRefuseControls(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a := NewAccounts(st)
	if _, err := a.AddUser(ctx, "alice", ""); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"a\x1b[31m", "a\u009bb", "a\u009d52;c;eA==\u009c", "evil\u202egnp", "a\u2066b\u2069", "\u200fx", "a\u061cb"} {
		_, err := a.AddUser(ctx, bad, "")
		if !errors.Is(err, api.ErrBadRequest) || !strings.Contains(err.Error(), "letters, digits") {
			t.Errorf("user name %q: %v", bad, err)
		}
		if err != nil && !termsafe.Clean(err.Error()) {
			t.Errorf("user name %q: the error carries it raw: %q", bad, err)
		}
		if _, _, err := a.AddDevice(ctx, "alice", bad, time.Hour); !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("device name %q: %v", bad, err)
		}
	}
}
