//go:build linux

package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procRoot is where procfs is mounted.
const procRoot = "/proc"

// ErrNoProcess reports that a pid does not (or no longer) exist.
var ErrNoProcess = errors.New("no such process")

// Proc describes one process at the moment it was read.
type Proc struct {
	PID  int
	PPID int
	// Comm is the kernel's short name (at most 15 bytes): by default the
	// base name of the file that was exec'd, as typed (a symlink's name,
	// not its target's).
	Comm string
	// State is the one-letter state of field 3 of /proc/<pid>/stat
	// ("R", "S", "D", "Z" for a zombie, ...).
	State string
	// StartTime is field 22 of /proc/<pid>/stat: when the process started,
	// in clock ticks (USER_HZ, 100 per second on Linux) since boot. With the
	// pid it identifies a process uniquely: Claude Code writes this very
	// number, as a decimal string, into its session files as "procStart".
	StartTime uint64
	// Exe is the target of /proc/<pid>/exe, without the " (deleted)" the
	// kernel appends when the file was replaced (an upgrade while running).
	// Empty when it cannot be read (another user's process, a kernel thread).
	Exe string
	// Cmdline is argv as the process sees it now. Empty for a zombie, a
	// kernel thread, a process in the middle of exec (comm and exe are
	// already the new program's), or when unreadable.
	Cmdline []string
}

// statFields are the fields of /proc/<pid>/stat this package uses.
type statFields struct {
	pid       int
	comm      string
	state     string
	ppid      int
	startTime uint64
}

// Stat reads the process pid. Only /proc/<pid>/stat is required: the
// executable and argv are best effort and left empty when unreadable.
// A missing process gives an error that matches ErrNoProcess.
func Stat(pid int) (Proc, error) {
	st, err := readStat(pid)
	if err != nil {
		return Proc{}, err
	}
	p := Proc{
		PID:       st.pid,
		PPID:      st.ppid,
		Comm:      st.comm,
		State:     st.state,
		StartTime: st.startTime,
	}
	p.Exe, _ = readExe(pid)
	p.Cmdline, _ = readCmdline(pid)
	return p, nil
}

func pidPath(pid int, name string) string {
	return procRoot + "/" + strconv.Itoa(pid) + "/" + name
}

func readStat(pid int) (statFields, error) {
	if pid <= 0 {
		return statFields{}, fmt.Errorf("proc: invalid pid %d", pid)
	}
	data, err := os.ReadFile(pidPath(pid, "stat"))
	if err != nil {
		return statFields{}, procErr(pid, err)
	}
	st, err := parseStat(data)
	if err != nil {
		return statFields{}, fmt.Errorf("proc: pid %d: %w", pid, err)
	}
	return st, nil
}

// procErr maps the errors of a vanished process (ENOENT before it is
// opened, ESRCH when it dies while its file is open) to ErrNoProcess.
func procErr(pid int, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("proc: pid %d: %w", pid, ErrNoProcess)
	}
	return fmt.Errorf("proc: pid %d: %w", pid, err)
}

// parseStat parses the content of /proc/<pid>/stat. The command name sits
// in parentheses and may itself hold spaces and parentheses, so it ends at
// the last ')' of the line: no later field can contain one.
func parseStat(data []byte) (statFields, error) {
	open := bytes.IndexByte(data, '(')
	closing := bytes.LastIndexByte(data, ')')
	if open < 1 || closing < open {
		return statFields{}, errors.New("malformed stat: no (comm)")
	}
	var st statFields
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data[:open])))
	if err != nil || pid <= 0 {
		return statFields{}, fmt.Errorf("malformed stat: bad pid %q", data[:open])
	}
	st.pid = pid
	st.comm = string(data[open+1 : closing])
	// rest[0] is field 3 (state); field n is rest[n-3].
	rest := strings.Fields(string(data[closing+1:]))
	if len(rest) < 22-2 {
		return statFields{}, fmt.Errorf("malformed stat: %d fields after comm", len(rest))
	}
	st.state = rest[0]
	if len(st.state) != 1 {
		return statFields{}, fmt.Errorf("malformed stat: bad state %q", st.state)
	}
	// A kernel-made process (pid 1's parent, kthreadd) has ppid 0.
	ppid, err := strconv.Atoi(rest[4-3])
	if err != nil || ppid < 0 {
		return statFields{}, fmt.Errorf("malformed stat: bad ppid %q", rest[4-3])
	}
	st.ppid = ppid
	st.startTime, err = strconv.ParseUint(rest[22-3], 10, 64)
	if err != nil {
		return statFields{}, fmt.Errorf("malformed stat: bad starttime %q", rest[22-3])
	}
	return st, nil
}

func readExe(pid int) (string, error) {
	exe, err := os.Readlink(pidPath(pid, "exe"))
	if err != nil {
		return "", procErr(pid, err)
	}
	return strings.TrimSuffix(exe, " (deleted)"), nil
}

func readCmdline(pid int) ([]string, error) {
	data, err := os.ReadFile(pidPath(pid, "cmdline"))
	if err != nil {
		return nil, procErr(pid, err)
	}
	return parseCmdline(data), nil
}

// parseCmdline splits NUL-separated argv. A process may rewrite its argv
// area (setproctitle) and leave no trailing NUL; that is accepted.
func parseCmdline(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	return strings.Split(string(bytes.TrimSuffix(data, []byte{0})), "\x00")
}

// ReadChars returns how many bytes the process has read so far, from
// all files, pipes and terminals (rchar of /proc/<pid>/io). For a tmux
// server it grows with the output of its panes.
func ReadChars(pid int) (uint64, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("proc: invalid pid %d", pid)
	}
	b, err := os.ReadFile(pidPath(pid, "io"))
	if err != nil {
		return 0, procErr(pid, err)
	}
	return parseReadChars(b)
}

func parseReadChars(b []byte) (uint64, error) {
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "rchar:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("proc: io: bad rchar %q", strings.TrimSpace(v))
			}
			return n, nil
		}
	}
	return 0, errors.New("proc: io: no rchar")
}
