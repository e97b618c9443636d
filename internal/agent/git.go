package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude/hooks"
	"github.com/corral-dev/corral/internal/gitrepo"
)

// Git: each session's summary (Session.Git) is refreshed when something
// may have changed it (a turn's end, an editing or Bash tool, the session
// starting, a git_status read) and never on a timer. Kicks are debounced,
// sessions of one working tree share one refresh, and a tree is refreshed
// at most once every gitGap (longer for one whose status is slow), by one
// loop that owns all of it. docs/git.md.

// Timing and bounds of the refreshes.
const (
	gitDebounce = 300 * time.Millisecond
	// gitGap is the shortest time between two refreshes of one tree; a
	// tree whose status takes d waits gitSlowFactor·d, up to gitMaxGap.
	gitGap        = 2 * time.Second
	gitSlowFactor = 10
	gitMaxGap     = time.Minute
	// gitRefreshers refreshes run at once; gitOps ops (git_status,
	// git_diff, worktrees) run at once beside them. The machine is not
	// corral's alone.
	gitRefreshers = 2
	gitOps        = 3
)

// gitState is the agent's git: the runner, the kicks for the loop, and the
// bound on git run for ops.
type gitState struct {
	*Agent
	g *gitrepo.Git
	// kicks carries session folders to refresh; fresh, summaries read by
	// an op. Sends never block: on a full channel, overflow asks the loop
	// for every session.
	kicks    chan string
	fresh    chan gitResult
	overflow atomic.Bool
	ops      chan struct{}
}

func newGitState(bin string, env []string) *gitState {
	return &gitState{
		g:     gitrepo.New(bin, env),
		kicks: make(chan string, 256),
		fresh: make(chan gitResult, 16),
		ops:   make(chan struct{}, gitOps),
	}
}

// gitResult is what a refresh read of one session folder: its summary, or
// none (nil: not a repository, or outside the roots).
type gitResult struct {
	dir string
	top string
	sum *api.GitSummary
	// failed: the read failed; sum is then only its error, to lay over
	// the last good summary.
	failed bool
}

// gitKey is one tree's (or, before its tree is known, one folder's)
// refresh schedule.
type gitKey struct {
	due     time.Time // when to run; zero: not pending
	running bool
	again   bool // kicked while running
	last    time.Time
	took    time.Duration
}

type gitDone struct {
	key  string
	res  []gitResult
	took time.Duration
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func gitEqual(a, b *api.GitSummary) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// worktreeDirty is the refusal that names what would be lost.
func worktreeDirty(w *api.SessionWorktree, files []string) error {
	const show = 20
	list := strings.Join(files[:min(len(files), show)], ", ")
	if len(files) > show {
		list += fmt.Sprintf(" and %d more", len(files)-show)
	}
	return api.Errorf(api.CodeWorktreeDirty, "the worktree %s has uncommitted changes or untracked files: %s; commit or stash them, kill without removing the worktree, or force", w.Path, list)
}

// gitKick asks for a refresh of a session's folder.
func (a *gitState) gitKick(dir string) {
	if dir == "" {
		return
	}
	select {
	case a.git.kicks <- dir:
	default:
		a.git.overflow.Store(true)
	}
}

// gitHook kicks a refresh for the hooks after which files or the branch
// may have changed.
func (a *gitState) gitHook(id string, p hooks.Payload) {
	switch p.HookEventName {
	case hooks.EventStop, hooks.EventStopFailure, hooks.EventSubagentStop, hooks.EventSessionStart:
	case hooks.EventPostToolUse, hooks.EventPostToolUseFailure:
		switch p.ToolName {
		case "Edit", "MultiEdit", "Write", "NotebookEdit", "Bash":
		default:
			return
		}
	default:
		return
	}
	a.mu.Lock()
	dir := ""
	if s, ok := a.sessions[id]; ok {
		dir = s.dir
	}
	a.mu.Unlock()
	a.gitKick(dir)
}

// gitLoop owns the refreshes: it maps folders to trees, schedules, runs at
// most gitRefreshers at once, and applies what they read.
func (a *gitState) gitLoop() {
	q := &gitSched{a: a, top: map[string]string{}, keys: map[string]*gitKey{}, done: make(chan gitDone, gitRefreshers)}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()

	q.kickAll()
	for {
		next, ok := q.startDue()
		if !ok {
			return // the agent is stopping
		}
		if !next.IsZero() {
			timer.Reset(max(time.Until(next), time.Millisecond))
		} else {
			timer.Reset(time.Hour)
		}
		select {
		case <-a.ctx.Done():
			// The refreshes see the same ctx and end; the agent's group
			// waits for them (done has room for each).
			return
		case dir := <-a.git.kicks:
			q.schedule(q.keyOf(dir), time.Now().Add(gitDebounce))
		case r := <-a.git.fresh:
			q.apply([]gitResult{r})
			if k := q.keys[r.top]; k != nil && !k.running {
				k.last = time.Now()
			}
		case d := <-q.done:
			q.finished(d)
		case <-timer.C:
		}
		if a.git.overflow.Swap(false) {
			q.kickAll()
		}
	}
}

// gitSched is gitLoop's schedule, owned by its goroutine.
type gitSched struct {
	a *gitState
	// top maps a session folder to its tree's top ("" once seen to be in
	// none); keys are trees, or folders whose tree is not known yet.
	top     map[string]string
	keys    map[string]*gitKey
	done    chan gitDone
	running int
}

func (q *gitSched) keyOf(dir string) string {
	if t := q.top[dir]; t != "" {
		return t
	}
	return dir
}

func (q *gitSched) schedule(key string, at time.Time) {
	k := q.keys[key]
	if k == nil {
		k = &gitKey{}
		q.keys[key] = k
	}
	if k.running {
		k.again = true
		return
	}
	gap := min(max(gitGap, gitSlowFactor*k.took), gitMaxGap)
	if !k.last.IsZero() {
		at = maxTime(at, k.last.Add(gap))
	}
	if k.due.IsZero() || at.Before(k.due) {
		k.due = at
	}
}

func (q *gitSched) kickAll() {
	a := q.a
	a.mu.Lock()
	dirs := make([]string, 0, len(a.sessions))
	for _, s := range a.sessions {
		dirs = append(dirs, s.dir)
	}
	a.mu.Unlock()
	for _, d := range dirs {
		q.schedule(q.keyOf(d), time.Now())
	}
}

// dirsOf lists the session folders a key covers now.
func (q *gitSched) dirsOf(key string) []string {
	a := q.a
	a.mu.Lock()
	defer a.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, s := range a.sessions {
		if !seen[s.dir] && (s.dir == key || q.top[s.dir] == key) {
			seen[s.dir] = true
			out = append(out, s.dir)
		}
	}
	return out
}

func (q *gitSched) apply(res []gitResult) {
	a := q.a
	for _, r := range res {
		if r.failed {
			continue
		}
		if old := q.top[r.dir]; old != r.top {
			q.top[r.dir] = r.top
		}
	}
	a.applyGit(res)
	// Forget folders no session is in any more.
	a.mu.Lock()
	live := map[string]bool{}
	for _, s := range a.sessions {
		live[s.dir] = true
	}
	a.mu.Unlock()
	for d := range q.top {
		if !live[d] {
			delete(q.top, d)
		}
	}
}

// startDue starts what is due, as far as the bound allows, and says when
// the next is due (zero: none). It reports false if the agent is stopping.
func (q *gitSched) startDue() (time.Time, bool) {
	a := q.a
	now := time.Now()
	next := time.Time{}
	for key, k := range q.keys {
		if k.due.IsZero() || k.running {
			continue
		}
		if k.due.After(now) || q.running == gitRefreshers {
			if next.IsZero() || k.due.Before(next) {
				next = k.due
			}
			continue
		}
		dirs := q.dirsOf(key)
		k.due = time.Time{}
		if len(dirs) == 0 {
			delete(q.keys, key)
			continue
		}
		started := a.Agent.g.Go(func() {
			start := time.Now()
			res := a.readGit(a.ctx, dirs)
			q.done <- gitDone{key: key, res: res, took: time.Since(start)}
		})
		if !started {
			return time.Time{}, false
		}
		k.running = true
		q.running++
	}
	return next, true
}

// finished applies what a refresh read, and schedules it again if it was
// kicked meanwhile.
func (q *gitSched) finished(d gitDone) {
	q.running--
	k := q.keys[d.key]
	k.running, k.last, k.took = false, time.Now(), d.took
	again := k.again
	k.again = false
	q.apply(d.res)
	for _, r := range d.res {
		if r.top != "" && q.keys[r.top] == nil {
			q.keys[r.top] = &gitKey{last: k.last, took: k.took}
		}
	}
	if t := q.top[d.key]; t != "" && t != d.key {
		// A folder's own key, until its tree was known.
		delete(q.keys, d.key)
		if again {
			q.schedule(t, time.Now().Add(gitDebounce))
		}
	} else if again {
		q.schedule(d.key, time.Now().Add(gitDebounce))
	}
}

// readGit reads the summary of each folder, one status per tree.
func (a *gitState) readGit(ctx context.Context, dirs []string) []gitResult {
	out := make([]gitResult, 0, len(dirs))
	byTop := map[string]gitResult{}
	for _, d := range dirs {
		r, err := a.git.g.Open(ctx, d, a.cfg.Roots)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if e := api.AsError(err); e.Code == api.CodeUnavailable {
				// git missing, or too slow: say so, keep what was known.
				out = append(out, gitResult{dir: d, failed: true, sum: &api.GitSummary{Error: e.Message}})
			} else {
				out = append(out, gitResult{dir: d}) // no repository to show
			}
			continue
		}
		if res, ok := byTop[r.Top]; ok {
			res.dir = d
			out = append(out, res)
			continue
		}
		st, err := a.git.g.Status(ctx, r, false)
		res := gitResult{dir: d, top: r.Top}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			res.failed, res.sum = true, &api.GitSummary{Root: r.Top, Worktree: r.Linked(), Error: api.AsError(err).Message}
		} else {
			sum := st.GitSummary
			res.sum = &sum
		}
		byTop[r.Top] = res
		out = append(out, res)
	}
	return out
}

// applyGit sets what was read on the sessions in those folders, and
// publishes the ones that changed.
func (a *gitState) applyGit(res []gitResult) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range res {
		for _, s := range a.sessions {
			if s.dir != r.dir {
				continue
			}
			next := r.sum
			if r.failed {
				switch {
				case s.git != nil:
					// The last state read stays, with why it is not newer.
					kept := *s.git
					kept.Error = r.sum.Error
					next = &kept
				case r.sum.Root == "":
					continue // nothing known to lay the error over
				}
			}
			if gitEqual(s.git, next) {
				continue
			}
			s.git = next
			a.in.publishLocked(s, s.st.Status, false)
		}
	}
}

// gitFresh hands the loop a summary an op just read, so the rows show it
// and the loop does not read it again at once.
func (a *gitState) gitFresh(dir, top string, sum api.GitSummary) {
	select {
	case a.git.fresh <- gitResult{dir: dir, top: top, sum: &sum}:
	default:
	}
}

// gitOp takes one of the slots of git ops, waiting as long as ctx lets it.
func (a *gitState) gitOp(ctx context.Context) (func(), error) {
	select {
	case a.git.ops <- struct{}{}:
		return func() { <-a.git.ops }, nil
	case <-ctx.Done():
		return nil, api.Errorf(api.CodeTooMany, "git is busy on this machine; try again")
	}
}

// gitRepo opens the working tree of a session's folder.
func (a *gitState) gitRepo(ctx context.Context, id string) (string, gitrepo.Repo, error) {
	a.mu.Lock()
	s, err := a.getLocked(id)
	dir := ""
	if err == nil {
		dir = s.dir
	}
	a.mu.Unlock()
	if err != nil {
		return "", gitrepo.Repo{}, err
	}
	r, err := a.git.g.Open(ctx, dir, a.cfg.Roots)
	if err != nil {
		if api.AsError(err).Code == api.CodeNotARepository {
			return "", gitrepo.Repo{}, api.Errorf(api.CodeNotARepository, "session %s: %s is not in a git repository", id, dir)
		}
		return "", gitrepo.Repo{}, err
	}
	return dir, r, nil
}

// GitStatus reads the git status of a session's folder, with line counts,
// and refreshes the session's summary with it.
func (a *gitState) GitStatus(ctx context.Context, req api.SessionRef) (api.GitStatus, error) {
	release, err := a.gitOp(ctx)
	if err != nil {
		return api.GitStatus{}, err
	}
	defer release()
	dir, r, err := a.gitRepo(ctx, req.ID)
	if err != nil {
		return api.GitStatus{}, err
	}
	st, err := a.git.g.Status(ctx, r, true)
	if err != nil {
		return api.GitStatus{}, err
	}
	a.gitFresh(dir, r.Top, st.GitSummary)
	gitrepo.FitStatus(&st, gitrepo.MaxAnswer)
	return st, nil
}

// GitDiff reads the diff of a session's folder.
func (a *gitState) GitDiff(ctx context.Context, req api.GitDiffRequest) (api.GitDiff, error) {
	if err := gitrepo.CheckPath(req.Path); err != nil {
		return api.GitDiff{}, err
	}
	release, err := a.gitOp(ctx)
	if err != nil {
		return api.GitDiff{}, err
	}
	defer release()
	_, r, err := a.gitRepo(ctx, req.ID)
	if err != nil {
		return api.GitDiff{}, err
	}
	return a.git.g.Diff(ctx, r, req.Staged, req.Path)
}

// makeWorktree makes the worktree a create asks for, in the repository
// that dir is in; the session starts in it.
func (a *gitState) makeWorktree(ctx context.Context, dir string, nw *api.NewWorktree) (*api.SessionWorktree, error) {
	release, err := a.gitOp(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	r, err := a.git.g.Open(ctx, dir, a.cfg.Roots)
	if err != nil {
		if api.AsError(err).Code == api.CodeNotARepository {
			return nil, api.Errorf(api.CodeNotARepository, "%s is not in a git repository: a worktree needs one", dir)
		}
		return nil, err
	}
	// A worktree of a worktree goes beside it, in the main tree, which
	// must be inside the roots too.
	if main := r.Main(); !gitrepo.Within(main, a.cfg.Roots) {
		return nil, api.Errorf(api.CodeForbidden, "the repository's main folder %s is outside the folders this machine serves (%s)", main, strings.Join(a.cfg.Roots, ", "))
	}
	w, err := a.git.g.AddWorktree(ctx, r, strings.TrimSpace(nw.Branch), strings.TrimSpace(nw.Base))
	if err != nil {
		return nil, err
	}
	a.log.Info("worktree made", "repo", w.Repo, "path", w.Path, "branch", w.Branch, "base", w.Base)
	return &w, nil
}

// undoWorktree takes back a worktree made for a session that then could
// not start: nothing was done in it, so its folder and branch go.
func (a *gitState) undoWorktree(w *api.SessionWorktree) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := a.git.g.RemoveWorktree(ctx, *w, true); err != nil {
		a.log.Warn("removing the worktree of a session that did not start", "path", w.Path, "err", err)
		return
	}
	if err := a.git.g.DeleteBranch(ctx, w.Repo, w.Branch); err != nil {
		a.log.Warn("deleting the branch of a session that did not start", "branch", w.Branch, "err", err)
	}
}

// checkRemoveWorktree says whether killing a session may remove its
// worktree: one corral made, that no other session runs in, and (unless
// force) with nothing in it that would be lost.
func (a *gitState) checkRemoveWorktree(ctx context.Context, id string, force bool) (*api.SessionWorktree, error) {
	a.mu.Lock()
	s, err := a.getLocked(id)
	if err != nil {
		a.mu.Unlock()
		return nil, err
	}
	w := s.worktree
	other := ""
	if w != nil {
		for _, o := range a.sessions {
			if o != s && (o.dir == w.Path || strings.HasPrefix(o.dir, w.Path+string(filepath.Separator))) {
				other = o.name
			}
		}
	}
	a.mu.Unlock()
	if w == nil {
		return nil, api.Errorf(api.CodeBadRequest, "session %s runs in no worktree corral made; kill it without remove_worktree", id)
	}
	if other != "" {
		return nil, api.Errorf(api.CodeConflict, "session %q runs in the worktree %s too; end it first", other, w.Path)
	}
	if force {
		return w, nil
	}
	release, err := a.gitOp(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	dirty, err := a.git.g.Dirty(ctx, w.Path)
	if err != nil {
		return nil, err
	}
	if len(dirty) > 0 {
		return nil, worktreeDirty(w, dirty)
	}
	return w, nil
}

// removeWorktree removes a killed session's worktree.
func (a *gitState) removeWorktree(w *api.SessionWorktree, force bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := a.git.g.RemoveWorktree(ctx, *w, force); err != nil {
		if strings.Contains(err.Error(), "modified or untracked files") {
			// It changed between the check and the removal.
			return api.Errorf(api.CodeWorktreeDirty, "the session ended, but its worktree %s changed meanwhile and is kept: %v", w.Path, err)
		}
		return api.Errorf(api.AsError(err).Code, "the session ended, but its worktree %s is kept: %v", w.Path, err)
	}
	a.log.Info("worktree removed", "path", w.Path, "branch", w.Branch, "forced", force)
	return nil
}
