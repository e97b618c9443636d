package api

// The git view of a session's folder: Session.Git (a summary the agent keeps
// fresh, event-driven), the git_status and git_diff ops (read on demand),
// sessions in a worktree corral made (Session.Worktree, CreateRequest.Worktree,
// KillRequest.RemoveWorktree), and the files each turn changed
// (TimelineItem.Files). docs/git.md says how each is found.

// GitSummary is a session's repository at a glance: what a row shows. It
// is absent when the session's folder is not in a git repository (or the
// agent may not read it: outside its roots).
type GitSummary struct {
	// Root is the top of the working tree the session's folder is in.
	Root string `json:"root"`
	// Branch is the checked-out branch ("main"), empty when Detached.
	Branch   string `json:"branch,omitempty"`
	Detached bool   `json:"detached,omitempty"`
	// Head is the commit checked out (40 hex digits), empty before the
	// first commit.
	Head string `json:"head,omitempty"`
	// Upstream is the branch's upstream ("origin/main"), when it has one;
	// Ahead and Behind count the commits between them.
	Upstream string `json:"upstream,omitempty"`
	Ahead    int    `json:"ahead,omitempty"`
	Behind   int    `json:"behind,omitempty"`
	// Changed counts the paths with any change: staged, unstaged,
	// untracked (each file, not its folder) or in conflict. Staged,
	// Unstaged, Untracked and Conflicted count them by kind; a path both
	// staged and changed again counts in both.
	Changed    int `json:"changed"`
	Staged     int `json:"staged"`
	Unstaged   int `json:"unstaged"`
	Untracked  int `json:"untracked"`
	Conflicted int `json:"conflicted,omitempty"`
	// Worktree: the folder is a linked worktree (`git worktree add`), not
	// the repository's main one.
	Worktree bool `json:"worktree,omitempty"`
	// Truncated: git listed more than corral reads (8 MiB of status); the
	// counts are at least these.
	Truncated bool `json:"truncated,omitempty"`
	// Error says why the last refresh failed (it took too long, git
	// refused the repository); the rest is the last state read.
	Error string `json:"error,omitempty"`
}

// SessionWorktree is the worktree corral made for a session
// (CreateRequest.Worktree): killing the session may remove it
// (KillRequest.RemoveWorktree).
type SessionWorktree struct {
	// Repo is the main working tree of the repository it belongs to.
	Repo string `json:"repo"`
	// Path is the worktree's folder (the session's Dir).
	Path string `json:"path"`
	// Branch is the branch corral created for it; Base the commit it
	// started from.
	Branch string `json:"branch"`
	Base   string `json:"base"`
}

// NewWorktree asks create to start the session in a new git worktree of
// the repository that Dir is in, on a new branch (docs/git.md).
type NewWorktree struct {
	// Branch is the new branch's name; `git check-ref-format --branch`
	// must accept it, and it must not exist yet.
	Branch string `json:"branch"`
	// Base is what the branch starts from (a branch, tag or commit);
	// empty: the repository's HEAD.
	Base string `json:"base,omitempty"`
}

// KillRequest ends a session. RemoveWorktree also removes the worktree
// corral made for it (Session.Worktree); a worktree with uncommitted
// changes or untracked files is kept and the kill refused
// (worktree_dirty, naming the files) unless Force. The branch stays.
type KillRequest struct {
	SessionRef
	RemoveWorktree bool `json:"remove_worktree,omitempty"`
	Force          bool `json:"force,omitempty"`
}

// GitStatus is the git status of a session's folder: the summary and every
// changed path (git_status).
type GitStatus struct {
	GitSummary
	// Files are the changed paths, in git's order (by path); at most
	// MaxGitFiles, and fewer when their JSON would not fit an answer
	// (FilesTruncated).
	Files          []GitFile `json:"files"`
	FilesTruncated bool      `json:"files_truncated,omitempty"`
}

// MaxGitFiles bounds GitStatus.Files.
const MaxGitFiles = 5000

// GitFile is one changed path of a GitStatus.
type GitFile struct {
	// Path is relative to Root, with slashes, exactly as git names it
	// (spaces and non-ASCII kept; never quoted).
	Path string `json:"path"`
	// OldPath is where a renamed or copied path came from.
	OldPath string `json:"old_path,omitempty"`
	// Index and Worktree are git's status letters of the staged and the
	// unstaged side (`git status --porcelain=v2`): "." unchanged, "M"
	// modified, "T" type changed, "A" added, "D" deleted, "R" renamed, "C"
	// copied; both "?" for an untracked file; in a conflict (Conflicted)
	// the two sides' letters ("U", "A", "D"), as `git status` shows them.
	Index      string `json:"index"`
	Worktree   string `json:"worktree"`
	Untracked  bool   `json:"untracked,omitempty"`
	Conflicted bool   `json:"conflicted,omitempty"`
	// Submodule: the path is a submodule.
	Submodule bool `json:"submodule,omitempty"`
	// Staged counts the lines of the staged change (HEAD to index),
	// Unstaged those of the unstaged one (index to the file; an untracked
	// file: its lines, up to 1 MiB of it). Absent when there is none, or
	// it was not counted.
	Staged   *GitLines `json:"staged,omitempty"`
	Unstaged *GitLines `json:"unstaged,omitempty"`
}

// GitLines counts the lines a change adds and removes; a binary file has
// none (Binary).
type GitLines struct {
	Added   int  `json:"added"`
	Removed int  `json:"removed"`
	Binary  bool `json:"binary,omitempty"`
}

// GitDiffRequest asks for the diff of a session's folder: the unstaged
// changes (index to files, untracked files as new ones), or with Staged the
// staged ones (HEAD to index); Path limits it to one file (relative to the
// repository's root, as GitFile.Path names it).
type GitDiffRequest struct {
	SessionRef
	Staged bool   `json:"staged,omitempty"`
	Path   string `json:"path,omitempty"`
}

// GitDiff is a diff of a session's folder (git_diff), one entry a file.
type GitDiff struct {
	Root   string        `json:"root"`
	Staged bool          `json:"staged"`
	Files  []GitFileDiff `json:"files"`
	// Truncated: some files' patches were left out or cut to keep the
	// answer under its limit (384 KiB of patch text); their counts are
	// still right.
	Truncated bool `json:"truncated,omitempty"`
}

// GitFileDiff is one file of a GitDiff.
type GitFileDiff struct {
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"`
	// Status is the change's letter: "A", "M", "D", "R", "C", "T", or "?"
	// for an untracked file (shown as added).
	Status  string `json:"status" ts:"'A' | 'M' | 'D' | 'R' | 'C' | 'T' | '?'"`
	Binary  bool   `json:"binary,omitempty"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	// Patch is the file's unified diff as git writes it (`diff --git`
	// header, `@@ -a,b +c,d @@` hunks with the file's real line numbers, 3
	// lines of context); empty for a binary file or a mode change. Any
	// unified-diff reader (jsdiff's parsePatch) reads it.
	Patch string `json:"patch"`
	// Truncated: Patch was cut (at a line end) or left out.
	Truncated bool `json:"truncated,omitempty"`
}

// TurnFile is a file a turn of the timeline changed through Claude's
// editing tools (Edit, MultiEdit, Write, NotebookEdit), on its prompt item
// (TimelineItem.Files).
type TurnFile struct {
	// Path is the file as Claude named it (absolute).
	Path string `json:"path"`
	// Added and Removed count the lines the turn's edits changed: exact
	// where Claude recorded its patch, else estimated from the edits.
	Added   int `json:"added"`
	Removed int `json:"removed"`
	// Edits counts the tool calls that changed it; Created says the first
	// one made the file.
	Edits   int  `json:"edits"`
	Created bool `json:"created,omitempty"`
}

// Validate refuses what no server could do.
func (r GitDiffRequest) Validate() error {
	if len(r.Path) > 4096 {
		return Errorf(CodeBadRequest, "path is longer than 4096 bytes")
	}
	return nil
}
