package claude

import (
	"testing"

	"github.com/corral-dev/corral/internal/testkit/imports"
)

// TestImports keeps the package a leaf: the standard library, fsnotify and
// corral's wire types only.
func TestImports(t *testing.T) {
	imports.Only(t, "github.com/fsnotify/fsnotify", "github.com/corral-dev/corral/internal/api")
}
