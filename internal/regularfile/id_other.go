//go:build !unix

package regularfile

import "io/fs"

// ID is unknown here; replacement is then noticed only by size.
func ID(fs.FileInfo) (dev, ino uint64) { return 0, 0 }
