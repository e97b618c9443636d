package agent

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude/transcript"
	"github.com/corral-dev/corral/internal/fetch"
)

// ListDir lists a directory inside the configured roots. An empty path
// lists the roots themselves.
func (a *Agent) ListDir(ctx context.Context, req api.DirsRequest) (api.DirListing, error) {
	path := req.Path
	if path == "" {
		if len(a.cfg.Roots) == 1 {
			path = a.cfg.Roots[0]
		} else {
			l := api.DirListing{Entries: []api.DirEntry{}}
			for _, r := range a.cfg.Roots {
				l.Entries = append(l.Entries, api.DirEntry{Name: r, Path: r, IsDir: true})
			}
			return l, nil
		}
	}
	real, root, err := a.inRoots(path)
	if err != nil {
		return api.DirListing{}, err
	}
	des, err := os.ReadDir(real)
	if err != nil {
		return api.DirListing{}, api.Errorf(api.CodeBadRequest, "list %s: %v", path, err)
	}
	const maxEntries = 5000
	l := api.DirListing{Path: real, Entries: make([]api.DirEntry, 0, min(len(des), maxEntries))}
	if real != root {
		l.Parent = filepath.Dir(real)
	}
	for _, de := range des {
		if len(l.Entries) == maxEntries {
			break
		}
		isDir := de.IsDir()
		if de.Type()&os.ModeSymlink != 0 {
			// A link counts as a directory only if it stays inside the roots.
			if _, _, err := a.inRoots(filepath.Join(real, de.Name())); err == nil {
				if fi, err := os.Stat(filepath.Join(real, de.Name())); err == nil {
					isDir = fi.IsDir()
				}
			} else {
				continue
			}
		}
		l.Entries = append(l.Entries, api.DirEntry{Name: de.Name(), Path: filepath.Join(real, de.Name()), IsDir: isDir})
	}
	sort.SliceStable(l.Entries, func(i, j int) bool {
		if l.Entries[i].IsDir != l.Entries[j].IsDir {
			return l.Entries[i].IsDir
		}
		return strings.ToLower(l.Entries[i].Name) < strings.ToLower(l.Entries[j].Name)
	})
	return l, nil
}

// inRoots resolves path (following symlinks) and checks that it lies inside
// one of the roots. It returns the resolved path and its root. A path
// outside the roots is refused the same way whether or not it exists, so
// the answer tells nothing about what is there.
func (a *Agent) inRoots(path string) (string, string, error) {
	if !filepath.IsAbs(path) || strings.ContainsRune(path, 0) {
		return "", "", api.Errorf(api.CodeBadRequest, "path must be absolute: %q", path)
	}
	real, exists := resolvePath(filepath.Clean(path))
	for _, r := range a.cfg.Roots {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			continue
		}
		if real == rr || strings.HasPrefix(real, rr+string(filepath.Separator)) || rr == "/" {
			if !exists {
				return "", "", api.Errorf(api.CodeNotFound, "no such directory: %s", path)
			}
			return real, rr, nil
		}
	}
	return "", "", api.Errorf(api.CodeForbidden, "%s is outside the allowed roots (%s)", path, strings.Join(a.cfg.Roots, ", "))
}

// resolvePath follows the symlinks of path as far as it exists and keeps
// the rest as written: where a missing path would be if it existed. A
// dangling link counts as where it points. exists says whether all of it
// does.
func resolvePath(path string) (real string, exists bool) {
	// 40 links, as Linux allows, then give up (a loop).
	for range 40 {
		p, rest := path, ""
		for {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				return filepath.Join(r, rest), rest == ""
			}
			if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				if t, err := os.Readlink(p); err == nil {
					if !filepath.IsAbs(t) {
						t = filepath.Join(filepath.Dir(p), t)
					}
					path = filepath.Join(t, rest)
					break
				}
			}
			parent := filepath.Dir(p)
			if parent == p {
				return path, false
			}
			rest = filepath.Join(filepath.Base(p), rest)
			p = parent
		}
	}
	return path, false
}

// Resumable lists the Claude sessions recorded for a directory.
func (a *Agent) Resumable(ctx context.Context, req api.ResumableRequest) ([]api.Resumable, error) {
	dir := req.Dir
	if !filepath.IsAbs(dir) {
		return nil, api.Errorf(api.CodeBadRequest, "dir must be an absolute path")
	}
	list, err := transcript.ListResumable(a.cfg.ClaudeDir, filepath.Clean(dir), 200)
	if err != nil {
		return nil, api.Errorf(api.CodeInternal, "resumable sessions: %v", err)
	}
	live := liveConversations(a.cfg.ClaudeDir)
	a.mu.Lock()
	for i := range list {
		for _, s := range a.sessions {
			if s.kind != api.KindShell && s.st.ClaudeSessionID == list[i].ID && s.st.Status != api.StatusExited {
				list[i].RunningIn, list[i].RunningName, list[i].Running = s.id, s.name, true
			}
		}
		if live[list[i].ID] {
			list[i].Running = true
		}
	}
	a.mu.Unlock()
	return list, nil
}

// Download fetches a URL into a session's directory (see internal/fetch for
// the rules: no path escape, a size limit, no silent overwrite).
func (a *Agent) Download(ctx context.Context, req api.DownloadRequest) (api.DownloadResult, error) {
	id := req.ID
	a.mu.Lock()
	s, err := a.getLocked(id)
	if err != nil {
		a.mu.Unlock()
		return api.DownloadResult{}, err
	}
	dir := s.dir
	a.mu.Unlock()
	res, err := fetch.Download(ctx, req.URL, dir, req.Path, fetch.Options{
		MaxBytes:  req.MaxBytes,
		Overwrite: req.Overwrite,
		S3:        fetch.S3ConfigFromEnv(func(k string) string { return envGet(a.cfg.Env, k) }),
	})
	if err != nil {
		return api.DownloadResult{}, api.Errorf(fetch.Code(err), "download: %v", err)
	}
	return api.DownloadResult{Path: res.Path, Size: res.Size, SHA256: res.SHA256}, nil
}
