// Package version reports corral's version, commit and build date: the ones
// stamped at link time by a release build (make release), else what Go
// recorded in the binary (module version, VCS revision and time).
//
//	go build -ldflags "-X github.com/corral-dev/corral/internal/version.version=v1.2.3
//	  -X github.com/corral-dev/corral/internal/version.commit=0123abcd...
//	  -X github.com/corral-dev/corral/internal/version.date=2026-12-01T10:00:00Z"
package version

import (
	"runtime"
	"runtime/debug"
)

// Set by the linker; read-only at run time.
var (
	version = ""
	commit  = ""
	date    = "" // RFC 3339, UTC
)

// Info is what a binary knows of its build.
type Info struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	Date    string `json:"date,omitempty"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
}

// String returns the version.
func String() string { return Get().Version }

// Get returns the build's description.
func Get() Info {
	in := Info{Version: version, Commit: commit, Date: date, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if in.Version == "" {
			in.Version = "dev"
		}
		return in
	}
	rev, revTime, dirty := "", "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			revTime = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if in.Commit == "" {
		in.Commit = rev
	}
	if in.Date == "" {
		in.Date = revTime
	}
	if in.Version != "" {
		return in
	}
	switch {
	case bi.Main.Version != "" && bi.Main.Version != "(devel)":
		in.Version = bi.Main.Version
	case rev == "":
		in.Version = "dev"
	default:
		short := rev
		if len(short) > 12 {
			short = short[:12]
		}
		if dirty {
			short += "-dirty"
		}
		in.Version = "dev-" + short
	}
	return in
}

// Short returns the commit cut to 12 characters, as git prints it.
func (in Info) Short() string {
	if len(in.Commit) > 12 {
		return in.Commit[:12]
	}
	return in.Commit
}
