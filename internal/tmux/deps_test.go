package tmux

import (
	"testing"

	"github.com/corral-dev/corral/internal/testkit/imports"
)

// TestImports keeps the package a leaf of corral's dependency order: the
// standard library only.
func TestImports(t *testing.T) {
	imports.Only(t)
}
