package gitrepo_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/gitrepo"
)

func jsonSize(v any) (int, error) {
	b, err := json.Marshal(v)
	return len(b), err
}

func TestParseStatus(t *testing.T) {
	out := "# branch.oid 0123456789012345678901234567890123456789\x00# branch.head feat/x\x00# branch.upstream origin/feat/x\x00# branch.ab +2 -3\x00" +
		"1 .M N... 100644 100644 100644 aaa aaa a b.txt\x00" +
		"2 R. N... 100644 100644 100644 bbb bbb R100 new name\x00old name\x00" +
		"u UU N... 100644 100644 100644 100644 c1 c2 c3 conflict.txt\x00" +
		"? untracked\x00! ignored\x00"
	st := gitrepo.ParseStatus([]byte(out), false)
	if st.Branch != "feat/x" || st.Upstream != "origin/feat/x" || st.Ahead != 2 || st.Behind != 3 || st.Head == "" {
		t.Errorf("%+v", st.GitSummary)
	}
	if st.Changed != 4 || st.Staged != 1 || st.Unstaged != 1 || st.Conflicted != 1 || st.Untracked != 1 {
		t.Errorf("%+v", st.GitSummary)
	}
	if st.Files[0].Path != "a b.txt" || st.Files[1].Path != "new name" || st.Files[1].OldPath != "old name" || !st.Files[2].Conflicted {
		t.Errorf("%+v", st.Files)
	}
	// Cut: the last, partial, entry is dropped.
	cut := gitrepo.ParseStatus([]byte(out[:len(out)-12]), true)
	if !cut.Truncated || cut.Changed != 3 {
		t.Errorf("cut: %+v", cut.GitSummary)
	}
	det := gitrepo.ParseStatus([]byte("# branch.oid (initial)\x00# branch.head (detached)\x00"), false)
	if !det.Detached || det.Head != "" || det.Branch != "" {
		t.Errorf("%+v", det.GitSummary)
	}
}

// FuzzParseStatus: any output reads without a panic, and every count
// matches the files kept.
func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("# branch.head main\x001 .M N... 100644 100644 100644 a a x\x00? y\x00"), false)
	f.Add([]byte("2 R. N... 100644 100644 100644 b b R100 new\x00"), true)
	f.Add([]byte("u UU N... 1 1 1 1 a b c d\x00# branch.ab +x -y"), false)
	f.Fuzz(func(t *testing.T, b []byte, cut bool) {
		st := gitrepo.ParseStatus(b, cut)
		if st.Changed != len(st.Files) || st.Ahead < 0 || st.Behind < 0 {
			t.Fatalf("%+v", st)
		}
		for _, f := range st.Files {
			if f.Path == "" || len(f.Index) != 1 || len(f.Worktree) != 1 {
				t.Fatalf("%+v", f)
			}
		}
	})
}

func FuzzParseNumstat(f *testing.F) {
	f.Add([]byte("1\t2\ta\x00-\t-\tbin\x000\t0\t\x00old\x00new\x00"), false)
	f.Add([]byte("1\t2\t"), true)
	f.Fuzz(func(t *testing.T, b []byte, cut bool) {
		for _, n := range gitrepo.ParseNumstat(b, cut) {
			if n.Path == "" || n.Lines.Added < 0 || n.Lines.Removed < 0 {
				t.Fatalf("%+v", n)
			}
		}
	})
}

// FuzzFitDiff: whatever the patches hold, the answer fits.
func FuzzFitDiff(f *testing.F) {
	f.Add("diff --git a/x b/x\n+\x01\x02\n", 3)
	f.Fuzz(func(t *testing.T, patch string, n int) {
		n = n%50 + 1
		d := api.GitDiff{}
		for range n {
			d.Files = append(d.Files, api.GitFileDiff{Path: "p", Patch: strings.Repeat(patch, 1+20000/(len(patch)+1))})
		}
		gitrepo.FitDiff(&d, 64<<10)
		if s, _ := jsonSize(d); s > 64<<10 {
			t.Fatalf("%d bytes", s)
		}
	})
}
