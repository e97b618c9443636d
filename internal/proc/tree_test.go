//go:build linux

package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

func TestChildren(t *testing.T) {
	sh := start(t, exec.Command("sh", "-c", "sleep 1000 & sleep 1000 & wait"))
	pid := sh.Process.Pid
	var kids []int
	// Until they exec, the children are forks of sh.
	waitFor(t, 5*time.Second, func() (bool, string) {
		var err error
		kids, err = Children(pid)
		if err != nil || len(kids) != 2 {
			return false, fmt.Sprint(kids, err)
		}
		for _, k := range kids {
			p, err := Stat(k)
			if err != nil || p.Comm != "sleep" || p.PPID != pid {
				return false, fmt.Sprintf("child %d: %+v, %v", k, p, err)
			}
		}
		return true, ""
	})
	scanned, err := childrenByScan(pid)
	if err != nil || !slices.Equal(scanned, kids) {
		t.Errorf("scan gives %v, %v; task files give %v", scanned, err, kids)
	}
	if none, err := Children(kids[0]); err != nil || len(none) != 0 {
		t.Errorf("Children(leaf) = %v, %v", none, err)
	}
}

// Go forks from whichever thread runs the goroutine, so our own children
// are spread over threads: every task's children file must be read.
func TestChildrenOfThreadedProcess(t *testing.T) {
	var want []int
	for range 8 {
		want = append(want, startSleep(t).Process.Pid)
	}
	got, err := Children(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !containsAll(got, want) {
		t.Errorf("Children(self) = %v, missing some of %v", got, want)
	}
	scanned, err := childrenByScan(os.Getpid())
	if err != nil || !containsAll(scanned, want) {
		t.Errorf("childrenByScan(self) = %v, %v", scanned, err)
	}
}

func TestChildrenMissing(t *testing.T) {
	pid := deadPID(t)
	if _, err := Children(pid); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Children = %v, want ErrNoProcess", err)
	}
	if _, err := childrenByScan(pid); !errors.Is(err, ErrNoProcess) {
		t.Errorf("childrenByScan = %v, want ErrNoProcess", err)
	}
	if _, err := Descendants(pid); !errors.Is(err, ErrNoProcess) {
		t.Errorf("Descendants = %v, want ErrNoProcess", err)
	}
}

func TestDescendants(t *testing.T) {
	// outer sh -> {inner sh -> {sleep}, sleep}
	sh := start(t, exec.Command("sh", "-c", `sh -c "sleep 1000 & wait" & sleep 1000 & wait`))
	pid := sh.Process.Pid
	var desc []int
	waitFor(t, 5*time.Second, func() (bool, string) {
		var err error
		desc, err = Descendants(pid)
		return err == nil && len(desc) == 3, fmt.Sprint(desc, err)
	})
	depth := map[int]int{pid: 0}
	for i, d := range desc {
		p, err := Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		parentDepth, ok := depth[p.PPID]
		if !ok {
			t.Fatalf("descendant %d (%s) listed before its parent %d: %v", d, p.Comm, p.PPID, desc)
		}
		depth[d] = parentDepth + 1
		if i > 0 && depth[d] < depth[desc[i-1]] {
			t.Errorf("not breadth first: %v", desc)
		}
	}
	if depth[desc[2]] != 2 {
		t.Errorf("want the grandchild last, depths %v", depth)
	}
}

func TestDescendantsOrderAndLoops(t *testing.T) {
	tree := map[int][]int{
		1: {2, 3},
		2: {4},
		3: {5, 1}, // a loop, as pid reuse mid-walk could make
		4: {6},
		5: {2}, // listed twice
	}
	children := func(pid int) ([]int, error) { return tree[pid], nil }
	got, err := descendants(1, children)
	if want := []int{2, 3, 4, 5, 6}; err != nil || !slices.Equal(got, want) {
		t.Errorf("descendants = %v, %v; want %v", got, err, want)
	}
}
