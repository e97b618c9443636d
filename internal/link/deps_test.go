package link

import (
	"testing"

	"github.com/corral-dev/corral/internal/testkit/imports"
)

// TestImports keeps the package small: the standard library, coder/websocket
// corral's wire types and its goroutine owner only.
func TestImports(t *testing.T) {
	imports.Only(t, "github.com/coder/websocket", "github.com/corral-dev/corral/internal/api", "github.com/corral-dev/corral/internal/lifetime")
}
