package gitrepo

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/corral-dev/corral/internal/api"
)

// Limits of a status.
const (
	// maxStatus caps what git status may print: about 80,000 changed
	// paths. A repository with more (a build folder nobody ignored) gets
	// counts marked Truncated.
	maxStatus = 8 << 20
	// maxNumstat caps each line count listing.
	maxNumstat = 4 << 20
	// maxCountFiles and maxCountBytes bound the untracked files whose
	// lines a status counts, and how much of each it reads.
	maxCountFiles = 1000
	maxCountBytes = 1 << 20
)

// Status reads the working tree's status: its branch, and every changed
// path (untracked files one by one, not their folders). With lines, each
// path's added and removed lines are counted too (two more git commands
// and reading untracked files); without, it is one `git status`.
func (g *Git) Status(ctx context.Context, r Repo, lines bool) (api.GitStatus, error) {
	res, err := g.run(ctx, r.Top, limits{timeout: statusTimeout, max: maxStatus},
		"status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all")
	if err != nil {
		return api.GitStatus{}, err
	}
	st := ParseStatus(res.out, res.cut)
	st.Root = r.Top
	st.Worktree = r.Linked()
	if !lines || len(st.Files) == 0 {
		return st, nil
	}
	staged, err := g.numstat(ctx, r.Top, true)
	if err != nil {
		return api.GitStatus{}, err
	}
	unstaged, err := g.numstat(ctx, r.Top, false)
	if err != nil {
		return api.GitStatus{}, err
	}
	counted := 0
	for i := range st.Files {
		f := &st.Files[i]
		if n, ok := staged[f.Path]; ok {
			f.Staged = &n
		}
		if n, ok := unstaged[f.Path]; ok {
			f.Unstaged = &n
		}
		if f.Untracked && counted < maxCountFiles {
			counted++
			if n, ok := countFile(r.Top, filepath.Join(r.Top, filepath.FromSlash(f.Path))); ok {
				f.Unstaged = &n
			}
		}
	}
	return st, nil
}

// Summary is the status without its files: what a session's row shows.
func Summary(st api.GitStatus) api.GitSummary { return st.GitSummary }

// numstat counts the lines of each changed path, staged (HEAD to index)
// or not (index to the files), by the path's (new) name.
func (g *Git) numstat(ctx context.Context, dir string, staged bool) (map[string]api.GitLines, error) {
	args := []string{diffCommand(staged), "--numstat", "-z", "--no-ext-diff", "--no-textconv", "--no-relative", "--no-color"}
	if staged {
		args = append(args, "--cached", "-M")
	}
	res, err := g.run(ctx, dir, limits{timeout: diffTimeout, max: maxNumstat}, args...)
	if err != nil {
		return nil, err
	}
	out := map[string]api.GitLines{}
	for _, n := range ParseNumstat(res.out, res.cut) {
		out[n.Path] = n.Lines
	}
	return out, nil
}

// ParseStatus reads `git status --porcelain=v2 --branch -z`. cut says the
// output was cut short: its last, partial, entry is dropped and the
// result marked Truncated. Files are kept up to api.MaxGitFiles; the counts
// cover every entry read.
func ParseStatus(out []byte, cut bool) api.GitStatus {
	st := api.GitStatus{Files: []api.GitFile{}, GitSummary: api.GitSummary{Truncated: cut}}
	toks := bytes.Split(out, []byte{0})
	if cut && len(toks) > 0 {
		toks = toks[:len(toks)-1]
	}
	for i := 0; i < len(toks); i++ {
		t := string(toks[i])
		if t == "" {
			continue
		}
		var f api.GitFile
		switch t[0] {
		case '#':
			header(&st.GitSummary, t)
			continue
		case '1':
			p := strings.SplitN(t, " ", 9)
			if len(p) != 9 || !xy(p[1]) {
				continue
			}
			f = api.GitFile{Path: p[8], Index: p[1][:1], Worktree: p[1][1:], Submodule: strings.HasPrefix(p[2], "S")}
		case '2':
			p := strings.SplitN(t, " ", 10)
			if len(p) != 10 || !xy(p[1]) || i+1 >= len(toks) {
				continue
			}
			i++
			f = api.GitFile{Path: p[9], OldPath: string(toks[i]), Index: p[1][:1], Worktree: p[1][1:], Submodule: strings.HasPrefix(p[2], "S")}
		case 'u':
			p := strings.SplitN(t, " ", 11)
			if len(p) != 11 || !xy(p[1]) {
				continue
			}
			f = api.GitFile{Path: p[10], Index: p[1][:1], Worktree: p[1][1:], Conflicted: true, Submodule: strings.HasPrefix(p[2], "S")}
		case '?':
			if len(t) < 3 || t[1] != ' ' {
				continue
			}
			f = api.GitFile{Path: t[2:], Index: "?", Worktree: "?", Untracked: true}
		default: // '!' (ignored), and kinds a later git may add
			continue
		}
		if f.Path == "" {
			continue
		}
		st.Changed++
		switch {
		case f.Untracked:
			st.Untracked++
		case f.Conflicted:
			st.Conflicted++
		default:
			if f.Index != "." {
				st.Staged++
			}
			if f.Worktree != "." {
				st.Unstaged++
			}
		}
		if len(st.Files) < api.MaxGitFiles {
			st.Files = append(st.Files, f)
		} else {
			st.FilesTruncated = true
		}
	}
	return st
}

// xy checks an entry's two status letters.
func xy(s string) bool {
	if len(s) != 2 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'A' && c <= 'Z' || c == '.') {
			return false
		}
	}
	return true
}

// header reads one "# branch.*" line.
func header(s *api.GitSummary, t string) {
	k, v, _ := strings.Cut(strings.TrimPrefix(t, "# "), " ")
	switch k {
	case "branch.oid":
		if v != "(initial)" {
			s.Head = v
		}
	case "branch.head":
		if v == "(detached)" {
			s.Detached = true
		} else {
			s.Branch = v
		}
	case "branch.upstream":
		s.Upstream = v
	case "branch.ab":
		a, b, _ := strings.Cut(v, " ")
		s.Ahead, _ = strconv.Atoi(strings.TrimPrefix(a, "+"))
		s.Behind, _ = strconv.Atoi(strings.TrimPrefix(b, "-"))
		s.Ahead, s.Behind = max(s.Ahead, 0), max(s.Behind, 0)
	}
}

// Numstat is one path of `git diff --numstat -z`.
type Numstat struct {
	Path, OldPath string
	Lines         api.GitLines
}

// ParseNumstat reads `git diff --numstat -z`: "added\tremoved\tpath\0", or
// for a rename "added\tremoved\t\0old\0new\0"; "-\t-" is a binary file.
// A cut output loses its last entry.
func ParseNumstat(out []byte, cut bool) []Numstat {
	toks := bytes.Split(out, []byte{0})
	if cut && len(toks) > 0 {
		toks = toks[:len(toks)-1]
	}
	var list []Numstat
	for i := 0; i < len(toks); i++ {
		p := strings.SplitN(string(toks[i]), "\t", 3)
		if len(p) != 3 {
			continue
		}
		var n Numstat
		if p[0] == "-" && p[1] == "-" {
			n.Lines.Binary = true
		} else {
			a, err1 := strconv.Atoi(p[0])
			r, err2 := strconv.Atoi(p[1])
			if err1 != nil || err2 != nil || a < 0 || r < 0 {
				continue
			}
			n.Lines.Added, n.Lines.Removed = a, r
		}
		n.Path = p[2]
		if n.Path == "" {
			if i+2 >= len(toks) {
				break
			}
			n.OldPath, n.Path = string(toks[i+1]), string(toks[i+2])
			i += 2
		}
		if n.Path == "" {
			continue
		}
		list = append(list, n)
	}
	return list
}

// countFile counts the lines of an untracked file, reading at most
// maxCountBytes of it; a symlink counts as its one line, a file with a NUL
// in its first 8000 bytes (git's test) as binary.
func countFile(top, path string) (api.GitLines, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return api.GitLines{}, false
	}
	// git walks no symlinked folder, but one may have been put in the way
	// since: read nothing outside the working tree.
	if real, err := filepath.EvalSymlinks(filepath.Dir(path)); err != nil || !Within(real, []string{top}) {
		return api.GitLines{}, false
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return api.GitLines{Added: 1}, true
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxCountBytes {
		return api.GitLines{}, false
	}
	f, err := os.Open(path)
	if err != nil {
		return api.GitLines{}, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCountBytes))
	if err != nil {
		return api.GitLines{}, false
	}
	if binary(b) {
		return api.GitLines{Binary: true}, true
	}
	return api.GitLines{Added: countLines(b)}, true
}

// binary is git's test: a NUL in the first 8000 bytes.
func binary(b []byte) bool { return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 }

// countLines counts lines, a last one without a newline included.
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}
