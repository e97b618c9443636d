//go:build linux

package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Children returns the pids of pid's direct children, sorted. It reads
// /proc/<pid>/task/*/children (every thread, since any thread may fork)
// and scans all of /proc when the kernel lacks that file
// (CONFIG_PROC_CHILDREN). A missing pid gives an error matching ErrNoProcess.
func Children(pid int) ([]int, error) {
	kids, err := childrenFromTasks(pid)
	if errors.Is(err, errNoChildrenFile) {
		return childrenByScan(pid)
	}
	return kids, err
}

var errNoChildrenFile = errors.New("no children file")

func childrenFromTasks(pid int) ([]int, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("proc: invalid pid %d", pid)
	}
	tasks, err := os.ReadDir(pidPath(pid, "task"))
	if err != nil {
		return nil, procErr(pid, err)
	}
	var kids []int
	for _, task := range tasks {
		data, err := os.ReadFile(pidPath(pid, "task/"+task.Name()+"/children"))
		if errors.Is(err, fs.ErrNotExist) {
			if task.Name() == strconv.Itoa(pid) {
				// The main thread always exists while the process does,
				// so its missing file means the kernel has none.
				if _, serr := os.Stat(pidPath(pid, "task/"+task.Name())); serr == nil {
					return nil, errNoChildrenFile
				}
			}
			continue // that thread exited meanwhile
		}
		if err != nil {
			continue
		}
		for f := range strings.FieldsSeq(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				kids = append(kids, n)
			}
		}
	}
	slices.Sort(kids)
	return slices.Compact(kids), nil
}

// childrenByScan finds children by reading every process's parent pid.
func childrenByScan(pid int) ([]int, error) {
	if _, err := readStat(pid); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("proc: %w", err)
	}
	var kids []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(n)
		if err != nil {
			continue // gone meanwhile
		}
		if st.ppid == pid {
			kids = append(kids, n)
		}
	}
	slices.Sort(kids)
	return kids, nil
}

// Descendants returns every process below pid (not pid itself),
// breadth first: children before grandchildren. Processes that vanish
// during the walk are skipped; only a missing pid is an error.
func Descendants(pid int) ([]int, error) {
	return descendants(pid, Children)
}

func descendants(pid int, children func(int) ([]int, error)) ([]int, error) {
	level, err := children(pid)
	if err != nil {
		return nil, err
	}
	// seen guards against loops that pid reuse during the walk could make.
	seen := map[int]bool{pid: true}
	var out []int
	for len(level) > 0 {
		var next []int
		for _, p := range level {
			if seen[p] {
				continue
			}
			seen[p] = true
			out = append(out, p)
			kids, err := children(p)
			if err != nil {
				continue
			}
			next = append(next, kids...)
		}
		level = next
	}
	return out, nil
}
