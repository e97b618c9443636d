package term

import (
	"testing"

	"github.com/corral-dev/corral/internal/testkit/imports"
)

// TestImports keeps the package a leaf of corral's dependency order: the
// standard library and creack/pty only.
func TestImports(t *testing.T) {
	imports.Only(t, "github.com/creack/pty")
}
