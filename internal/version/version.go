// Package version reports corral's version: the one set at link time
// (-ldflags "-X github.com/corral-dev/corral/internal/version.version=v1.2.3"),
// else the module version or VCS revision Go recorded in the binary.
package version

import "runtime/debug"

var version = "" // set by the linker; read-only at run time

// String returns the version.
func String() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "dev-" + rev
}
