// Package fetch downloads one file from an object-storage URL into a
// directory, safely: the `download` op of docs/protocol.md.
//
// A URL is either http(s) (typically a presigned URL, fetched with a plain
// GET) or s3://bucket/key (fetched with minio-go and the agent's
// credentials, see S3Config), or data:<type>;base64,<data>: the file itself,
// as the browser sends an upload or a pasted screenshot (the request's size
// limit bounds it). The target is a path relative to the
// directory; it may not leave it, lexically (absolute paths, `..`) or
// through a symlink that resolves outside it.
//
// Nothing is left behind on failure: the data goes to a temporary file
// (".corral-download-*.tmp", created with O_EXCL next to the target), which
// is fsynced and then renamed into place; without Options.Overwrite the
// rename does not replace a file (renameat2 RENAME_NOREPLACE on Linux, a
// hard link elsewhere), so a file created meanwhile is not clobbered either.
// Parent directories created for the download are removed again when it
// fails. A new file gets mode 0644 less the umask, like a file written by
// any other tool in the session (the session's files are the person's own
// and the session must be able to read them); an overwritten file gets that
// mode too, not the old one.
//
// Errors wrap one of the sentinel errors below (test with errors.Is), and
// Code maps an error to the API's error code.
package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
)

// DefaultMaxBytes is the size limit when Options.MaxBytes is not positive.
const DefaultMaxBytes int64 = 100 << 20

// Sentinel errors; every error Download returns for these reasons wraps one.
var (
	ErrBadURL      = errors.New("bad url")                         // bad_request
	ErrBadPath     = errors.New("bad path")                        // bad_request
	ErrEscape      = errors.New("path leaves the directory")       // forbidden
	ErrExists      = errors.New("file exists")                     // conflict
	ErrTooLarge    = errors.New("too large")                       // too_large
	ErrNotFound    = errors.New("not found")                       // not_found: no such object or bucket
	ErrDenied      = errors.New("access denied by the server")     // forbidden: 401/403, bad credentials, expired URL
	ErrUnavailable = errors.New("server or network not available") // unavailable: network errors, other statuses
)

// Error is the error Download returns for the reasons above: Kind is the
// sentinel, Err the cause (if any).
type Error struct {
	Kind error
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

// Is reports whether target is the error's kind.
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func newErr(kind error, cause error, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...), Err: cause}
}

// Code maps an error of Download to the API's error code (docs/api.md).
func Code(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrBadURL), errors.Is(err, ErrBadPath):
		return "bad_request"
	case errors.Is(err, ErrEscape), errors.Is(err, ErrDenied):
		return "forbidden"
	case errors.Is(err, ErrNotFound):
		return "not_found"
	case errors.Is(err, ErrExists):
		return "conflict"
	case errors.Is(err, ErrTooLarge):
		return "too_large"
	case errors.Is(err, ErrUnavailable), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "unavailable"
	}
	return "internal"
}

// Options tune Download; the zero value is usable.
type Options struct {
	// MaxBytes is the most the file may have; not positive means
	// DefaultMaxBytes.
	MaxBytes int64
	// Overwrite allows replacing an existing file.
	Overwrite bool
	// S3 is used for s3:// URLs; the zero value means S3ConfigFromEnv(os.Getenv).
	S3 S3Config
	// HTTPClient is used for http(s) URLs (its redirect policy is replaced
	// by Download's), and its Transport for s3:// URLs; nil means a default.
	HTTPClient *http.Client
}

// Result describes a finished download.
type Result struct {
	Path   string // dir joined with Rel
	Rel    string // the cleaned path relative to dir
	Size   int64
	SHA256 string // hex
}

// Download fetches rawURL into dir/rel. rel is relative to dir; empty means
// the URL's base name. See the package documentation for the rules.
func Download(ctx context.Context, rawURL, dir, rel string, opts Options) (res Result, err error) {
	src, err := parseURL(rawURL)
	if err != nil {
		return Result{}, err
	}
	if rel == "" {
		rel = src.baseName()
		if rel == "" || rel == "." || rel == ".." || rel == "/" {
			return Result{}, newErr(ErrBadPath, nil, "no file name in %s; give a path", src.redacted())
		}
	}
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	rdir, err := resolveDir(dir)
	if err != nil {
		return Result{}, err
	}
	// Check the path before any network traffic; nothing is created yet.
	clean, err := checkPath(rdir, rel, nil)
	if err != nil {
		return Result{}, err
	}
	if !opts.Overwrite {
		if _, err := os.Lstat(filepath.Join(rdir, clean)); err == nil {
			return Result{}, newErr(ErrExists, nil, "%s exists", clean)
		}
	}

	body, size, err := src.open(ctx, opts)
	if err != nil {
		return Result{}, err
	}
	defer body.Close()
	if size > limit {
		return Result{}, newErr(ErrTooLarge, nil, "%s is %d bytes, more than the limit of %d", src.redacted(), size, limit)
	}

	// Create missing parents (checking every step again) and remove them
	// again if anything below fails.
	var created []string
	defer func() {
		if err != nil {
			for i := len(created) - 1; i >= 0; i-- {
				_ = os.Remove(created[i])
			}
		}
	}()
	clean, err = checkPath(rdir, rel, &created)
	if err != nil {
		return Result{}, err
	}
	parent, base := filepath.Split(filepath.Join(rdir, clean))
	pdir, err := openDir(rdir, parent)
	if err != nil {
		return Result{}, err
	}
	defer pdir.Close()
	tmp, tmpName, err := createTemp(pdir)
	if err != nil {
		return Result{}, fmt.Errorf("fetch: creating a temporary file in %s: %w", parent, err)
	}
	renamed := false
	defer func() {
		if !renamed {
			tmp.Close()
			removeAt(pdir, tmpName)
		}
	}()

	h := sha256.New()
	n, err := copyLimited(ctx, tmp, h, body, limit)
	if err != nil {
		return Result{}, wrapCopyErr(ctx, err, src)
	}
	if size >= 0 && n != size {
		return Result{}, newErr(ErrUnavailable, nil, "%s: got %d bytes, expected %d", src.redacted(), n, size)
	}
	if err := tmp.Sync(); err != nil {
		return Result{}, fmt.Errorf("fetch: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return Result{}, fmt.Errorf("fetch: %w", err)
	}
	if ctx.Err() != nil {
		return Result{}, newErr(nil, ctx.Err(), "download of %s stopped", src.redacted())
	}
	if err := renameAt(pdir, tmpName, base, opts.Overwrite); err != nil {
		if errors.Is(err, os.ErrExist) {
			return Result{}, newErr(ErrExists, nil, "%s exists", clean)
		}
		return Result{}, fmt.Errorf("fetch: renaming into %s: %w", clean, err)
	}
	renamed = true
	_ = pdir.Sync() // make the rename durable; some filesystems refuse fsync on a directory
	return Result{
		Path:   filepath.Join(dir, clean),
		Rel:    clean,
		Size:   n,
		SHA256: hex.EncodeToString(h.Sum(nil)),
	}, nil
}

// errWrite marks an error of writing the local file (as opposed to reading
// from the server).
type errWrite struct{ err error }

func (e errWrite) Error() string { return e.err.Error() }
func (e errWrite) Unwrap() error { return e.err }

type fileWriter struct {
	f *os.File
	h hash.Hash
}

func (w fileWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.h.Write(p[:n])
	if err != nil {
		return n, errWrite{err}
	}
	return n, nil
}

var errOverLimit = errors.New("over the limit")

// copyLimited copies body to f (and h) and fails with errOverLimit past
// limit bytes, whatever the server announced.
func copyLimited(ctx context.Context, f *os.File, h hash.Hash, body io.Reader, limit int64) (int64, error) {
	buf := make([]byte, 256<<10)
	read := limit
	if read < math.MaxInt64 {
		read++ // one byte more tells "too much"
	}
	n, err := io.CopyBuffer(fileWriter{f, h}, io.LimitReader(body, read), buf)
	if err != nil {
		return n, err
	}
	if n > limit {
		return n, errOverLimit
	}
	// A reader that ignores its context would otherwise let a cancelled
	// download finish.
	return n, ctx.Err()
}

func wrapCopyErr(ctx context.Context, err error, src source) error {
	var we errWrite
	switch {
	case errors.Is(err, errOverLimit):
		return newErr(ErrTooLarge, nil, "%s is larger than the limit (the server did not announce its size, or announced less)", src.redacted())
	case ctx.Err() != nil:
		return newErr(nil, ctx.Err(), "download of %s stopped", src.redacted())
	case errors.As(err, &we):
		return fmt.Errorf("fetch: writing the file: %w", we.err)
	}
	return newErr(ErrUnavailable, redactErr(err), "reading %s", src.redacted())
}
