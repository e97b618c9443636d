//go:build linux

package proc

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
)

// tcpListen is the kernel's TCP_LISTEN state as /proc/net/tcp prints it.
const tcpListen = "0A"

// ListeningTCPPorts returns the local ports of the listening TCP sockets
// (IPv4 and IPv6) that process pid holds open, sorted and without
// duplicates; none gives an empty slice. It matches the socket inodes in
// /proc/<pid>/fd against /proc/<pid>/net/tcp{,6}, which show the process's
// own network namespace. Reading another user's fds needs privilege: that
// is an error, never a silent "none".
func ListeningTCPPorts(pid int) ([]int, error) {
	inodes, err := socketInodes(pid)
	if err != nil || len(inodes) == 0 {
		return nil, err
	}
	var ports []int
	for _, table := range []string{"net/tcp", "net/tcp6"} {
		data, err := os.ReadFile(pidPath(pid, table))
		if errors.Is(err, fs.ErrNotExist) && table == "net/tcp6" {
			continue // IPv6 disabled
		}
		if err != nil {
			return nil, procErr(pid, err)
		}
		ports = append(ports, listeningPorts(data, inodes)...)
	}
	slices.Sort(ports)
	return slices.Compact(ports), nil
}

// HasListeningTCP reports whether pid holds any listening TCP socket.
func HasListeningTCP(pid int) (bool, error) {
	ports, err := ListeningTCPPorts(pid)
	return len(ports) > 0, err
}

// socketInodes returns the inodes of the sockets among pid's open files.
func socketInodes(pid int) (map[uint64]bool, error) {
	dir := pidPath(pid, "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, procErr(pid, err)
	}
	inodes := map[uint64]bool{}
	for _, e := range ents {
		link, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue // closed meanwhile
		}
		rest, ok := strings.CutPrefix(link, "socket:[")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64); err == nil {
			inodes[n] = true
		}
	}
	return inodes, nil
}

// listeningPorts parses a /proc/net/tcp or tcp6 table and returns the
// local ports of listening sockets whose inode is in inodes. Lines look
// like "0: 0100007F:1F90 00000000:0000 0A ... uid timeout inode ...".
func listeningPorts(data []byte, inodes map[uint64]bool) []int {
	var ports []int
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != tcpListen {
			continue // the header line, or not listening
		}
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil || !inodes[inode] {
			continue
		}
		_, portHex, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		port, err := strconv.ParseUint(portHex, 16, 16)
		if err != nil {
			continue
		}
		ports = append(ports, int(port))
	}
	return ports
}
