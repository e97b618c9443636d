//go:build linux

package proc

import (
	"bytes"
	"io"
	"os"
)

// maxEnviron bounds how much of a process's environment is read.
const maxEnviron = 1 << 20

// Getenv returns the value of key in the environment process pid started
// with (/proc/<pid>/environ: what it was exec'd with, not later changes).
// A missing process gives an error that matches ErrNoProcess; another
// user's process, a permission error.
func Getenv(pid int, key string) (string, bool, error) {
	f, err := os.Open(pidPath(pid, "environ"))
	if err != nil {
		return "", false, procErr(pid, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEnviron))
	if err != nil {
		return "", false, procErr(pid, err)
	}
	v, ok := lookupEnv(data, key)
	return v, ok, nil
}

// lookupEnv finds key in NUL-separated KEY=VALUE entries; the last one
// wins, as with getenv.
func lookupEnv(data []byte, key string) (string, bool) {
	var val string
	found := false
	prefix := []byte(key + "=")
	for _, kv := range bytes.Split(data, []byte{0}) {
		if bytes.HasPrefix(kv, prefix) {
			val, found = string(kv[len(prefix):]), true
		}
	}
	return val, found
}
