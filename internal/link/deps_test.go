package link

import (
	"testing"

	"github.com/corral-dev/corral/internal/testkit/imports"
)

// TestImports keeps the package small: the standard library, coder/websocket
// and corral's wire types only.
func TestImports(t *testing.T) {
	imports.Only(t, "github.com/coder/websocket", "github.com/corral-dev/corral/internal/api")
}
