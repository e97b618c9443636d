package fetch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tree lists everything under dir (relative paths, directories with a
// trailing slash), to tell that nothing was left behind.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		r, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			r += "/"
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func wantTree(t *testing.T, dir string, want ...string) {
	t.Helper()
	got := tree(t, dir)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s holds %q, want %q", dir, got, want)
	}
}

func wantFile(t *testing.T, p string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s has %d bytes %.40q, want %d bytes %.40q", p, len(got), got, len(want), want)
	}
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func payload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// fileServer serves content at every path and counts requests.
func fileServer(t *testing.T, content []byte) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.Header.Get("Accept-Encoding") != "identity" {
			t.Errorf("Accept-Encoding = %q", r.Header.Get("Accept-Encoding"))
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(content)))
		w.Write(content)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestDownloadHTTP(t *testing.T) {
	content := payload(300 << 10)
	srv, _ := fileServer(t, content)
	dir := t.TempDir()

	// Empty rel: the URL's base name; the query and fragment are not part of it.
	res, err := Download(testCtx(t), srv.URL+"/files/report%20v1.pdf?X-Amz-Signature=abc#frag", dir, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rel != "report v1.pdf" || res.Path != filepath.Join(dir, "report v1.pdf") || res.Size != int64(len(content)) || res.SHA256 != sum(content) {
		t.Fatalf("result %+v", res)
	}
	wantFile(t, res.Path, content)
	fi, err := os.Stat(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm&^0o644 != 0 || perm&0o600 != 0o600 {
		t.Fatalf("mode %v, want 0644 less the umask", perm)
	}

	// A path with new parent directories.
	res, err = Download(testCtx(t), srv.URL+"/x", dir, "a/b/c.bin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantFile(t, filepath.Join(dir, "a", "b", "c.bin"), content)
	wantTree(t, dir, "report v1.pdf", "a/", "a/b/", "a/b/c.bin")

	// A URL without a file name needs a path.
	_, err = Download(testCtx(t), srv.URL+"/", dir, "", Options{})
	if !errors.Is(err, ErrBadPath) || Code(err) != "bad_request" {
		t.Fatalf("no name: %v", err)
	}
}

func TestSchemes(t *testing.T) {
	dir := t.TempDir()
	for _, u := range []string{"file:///etc/passwd", "ftp://example.com/x", "example.com/x", "/etc/passwd", "", "gopher://h/x",
		"javascript:alert(1)", "s3://", "s3://bucket", "s3://bucket/", "s3://Bad_Bucket/x", "s3://bucket/dir/", "http:///x",
		"https://h/a b", "https://h/a\nb"} {
		_, err := Download(testCtx(t), u, dir, "x", Options{})
		if !errors.Is(err, ErrBadURL) || Code(err) != "bad_request" {
			t.Errorf("Download(%q) = %v, want ErrBadURL", u, err)
		}
	}
	wantTree(t, dir)
	for _, u := range []string{"https://example.com/x", "HTTP://example.com/x", "s3://bucket/key", "s3://my.bucket/a/b c%d?e"} {
		if _, err := parseURL(u); err != nil {
			t.Errorf("parseURL(%q): %v", u, err)
		}
	}
	if s, _ := parseURL("s3://b-1/dir/a%20b?c"); s.baseName() != "a%20b?c" {
		t.Errorf("s3 keys are literal: %q", s.baseName())
	}
}

func TestHTTPStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.Error(w, "no", http.StatusNotFound)
		case "/expired":
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>`)
		case "/broken":
			http.Error(w, "oops", http.StatusInternalServerError)
		case "/partial":
			w.WriteHeader(http.StatusPartialContent)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	for _, c := range []struct {
		path, code string
		kind       error
		msg        string
	}{
		{"/missing", "not_found", ErrNotFound, "404 Not Found"},
		{"/expired", "forbidden", ErrDenied, "403 Forbidden (AccessDenied: Request has expired)"},
		{"/broken", "unavailable", ErrUnavailable, "500 Internal Server Error"},
		{"/partial", "unavailable", ErrUnavailable, "206 Partial Content"},
	} {
		_, err := Download(testCtx(t), srv.URL+c.path+"?X-Amz-Signature=SECRET", dir, "f", Options{})
		if !errors.Is(err, c.kind) || Code(err) != c.code || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v (code %s), want %v with %q", c.path, err, Code(err), c.kind, c.msg)
		}
		if err != nil && strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: the error shows the query: %v", c.path, err)
		}
	}
	wantTree(t, dir)

	// Nothing listening: unavailable, and the query is not shown either.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	_, err := Download(testCtx(t), deadURL+"/x?sig=SECRET", dir, "", Options{})
	if !errors.Is(err, ErrUnavailable) || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("dead server: %v", err)
	}
	wantTree(t, dir)
}

func TestHTTPRedirects(t *testing.T) {
	content := []byte("at the end of the redirects")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		switch {
		case r.URL.Path == "/file":
			w.Write(content)
		case r.URL.Path == "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case r.URL.Path == "/ftp":
			http.Redirect(w, r, "ftp://127.0.0.1/x", http.StatusFound)
		default:
			if _, err := fmt.Sscanf(r.URL.Path, "/hop%d", &n); err != nil {
				http.NotFound(w, r)
			} else if n == 0 {
				http.Redirect(w, r, "/file", http.StatusTemporaryRedirect)
			} else {
				http.Redirect(w, r, fmt.Sprintf("/hop%d", n-1), http.StatusFound)
			}
		}
	}))
	defer srv.Close()
	dir := t.TempDir()

	// Four redirects: followed.
	res, err := Download(testCtx(t), srv.URL+"/hop3", dir, "ok.txt", Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantFile(t, res.Path, content)

	// Six: refused.
	_, err = Download(testCtx(t), srv.URL+"/hop5", dir, "six.txt", Options{})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("six redirects: %v", err)
	}
	_, err = Download(testCtx(t), srv.URL+"/loop", dir, "loop.txt", Options{})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("loop: %v", err)
	}
	_, err = Download(testCtx(t), srv.URL+"/ftp", dir, "ftp.txt", Options{})
	if !errors.Is(err, ErrBadURL) {
		t.Fatalf("redirect to ftp: %v", err)
	}
	wantTree(t, dir, "ok.txt")
}

// hijack writes a raw response, to lie in ways net/http's server would not.
func hijack(w http.ResponseWriter, raw string) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	buf.WriteString(raw)
	buf.Flush()
}

func TestSizeLimit(t *testing.T) {
	big := payload(5000)
	var bodyBytes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/announced": // honest and too large
			w.Header().Set("Content-Length", fmt.Sprint(len(big)))
			n, _ := w.Write(big)
			bodyBytes.Add(int64(n))
		case "/chunked": // no length at all, then too much
			w.Header().Set("Transfer-Encoding", "chunked")
			for i := 0; i < 5; i++ {
				w.Write(big[i*1000 : (i+1)*1000])
				w.(http.Flusher).Flush()
			}
		case "/claims-small": // says 10 bytes, sends 5000: the client reads 10
			hijack(w, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\n"+string(big))
		case "/claims-more": // says 1000, sends 10 and hangs up
			hijack(w, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n0123456789")
		case "/exact":
			w.Write(big[:1000])
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	opts := Options{MaxBytes: 1000}

	_, err := Download(testCtx(t), srv.URL+"/announced", dir, "new/dir/f", opts)
	if !errors.Is(err, ErrTooLarge) || Code(err) != "too_large" || !strings.Contains(err.Error(), "5000 bytes") {
		t.Fatalf("announced: %v", err)
	}
	_, err = Download(testCtx(t), srv.URL+"/chunked", dir, "new/dir/f", opts)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("chunked: %v", err)
	}
	wantTree(t, dir) // neither the file nor its new directories

	res, err := Download(testCtx(t), srv.URL+"/claims-small", dir, "small", opts)
	if err != nil || res.Size != 10 {
		t.Fatalf("claims-small: %+v, %v", res, err)
	}
	wantFile(t, res.Path, big[:10])

	_, err = Download(testCtx(t), srv.URL+"/claims-more", dir, "more", opts)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("claims-more: %v", err)
	}

	// Exactly the limit is fine.
	res, err = Download(testCtx(t), srv.URL+"/exact", dir, "exact", opts)
	if err != nil || res.Size != 1000 {
		t.Fatalf("exact: %+v, %v", res, err)
	}
	// No overflow at the largest limit.
	if _, err := Download(testCtx(t), srv.URL+"/exact", dir, "huge-limit", Options{MaxBytes: math.MaxInt64}); err != nil {
		t.Fatal(err)
	}
	wantTree(t, dir, "exact", "huge-limit", "small")
}

func TestExistsAndOverwrite(t *testing.T) {
	content := []byte("new content")
	srv, hits := fileServer(t, content)
	dir := t.TempDir()
	target := filepath.Join(dir, "a.txt")
	os.WriteFile(target, []byte("old"), 0o600)

	_, err := Download(testCtx(t), srv.URL+"/a.txt", dir, "", Options{})
	if !errors.Is(err, ErrExists) || Code(err) != "conflict" {
		t.Fatalf("existing: %v", err)
	}
	if hits.Load() != 0 {
		t.Fatalf("the server was asked although the file exists")
	}
	wantFile(t, target, []byte("old"))

	res, err := Download(testCtx(t), srv.URL+"/a.txt", dir, "", Options{Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	wantFile(t, target, content)
	if res.Size != int64(len(content)) {
		t.Fatalf("result %+v", res)
	}

	// A symlink inside the directory is replaced by the file, its target untouched.
	os.WriteFile(filepath.Join(dir, "real.txt"), []byte("real"), 0o644)
	os.Symlink("real.txt", filepath.Join(dir, "link.txt"))
	if _, err := Download(testCtx(t), srv.URL+"/x", dir, "link.txt", Options{}); !errors.Is(err, ErrExists) {
		t.Fatalf("symlink without overwrite: %v", err)
	}
	if _, err := Download(testCtx(t), srv.URL+"/x", dir, "link.txt", Options{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	wantFile(t, filepath.Join(dir, "real.txt"), []byte("real"))
	if fi, err := os.Lstat(filepath.Join(dir, "link.txt")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("link.txt: %v %v", fi.Mode(), err)
	}

	// A directory is never overwritten.
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	if _, err := Download(testCtx(t), srv.URL+"/x", dir, "d", Options{Overwrite: true}); !errors.Is(err, ErrBadPath) {
		t.Fatalf("directory: %v", err)
	}
	wantTree(t, dir, "a.txt", "d/", "link.txt", "real.txt")
}

// A file that appears while the download runs is not clobbered.
func TestCreatedMeanwhile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "race.txt")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("downloaded"))
		w.(http.Flusher).Flush()
		os.WriteFile(target, []byte("someone else's"), 0o644)
	}))
	defer srv.Close()
	_, err := Download(testCtx(t), srv.URL+"/x", dir, "race.txt", Options{})
	if !errors.Is(err, ErrExists) {
		t.Fatalf("err = %v, want ErrExists", err)
	}
	wantFile(t, target, []byte("someone else's"))
	wantTree(t, dir, "race.txt")

	// The no-replace rename itself, on this filesystem.
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	os.WriteFile(filepath.Join(dir, "tmp"), []byte("t"), 0o644)
	if err := renameAt(d, "tmp", "race.txt", false); !errors.Is(err, os.ErrExist) {
		t.Fatalf("renameAt: %v", err)
	}
	if err := linkNoReplace(int(d.Fd()), "tmp", "race.txt"); !errors.Is(err, os.ErrExist) {
		t.Fatalf("linkNoReplace: %v", err)
	}
	if err := linkNoReplace(int(d.Fd()), "tmp", "fresh.txt"); err != nil {
		t.Fatalf("linkNoReplace: %v", err)
	}
	wantTree(t, dir, "fresh.txt", "race.txt")
}

// Two downloads to one name at once: one wins, the other gets ErrExists.
func TestConcurrentSameTarget(t *testing.T) {
	dir := t.TempDir()
	var arrived sync.WaitGroup
	arrived.Add(2)
	both := make(chan struct{})
	go func() { arrived.Wait(); close(both) }()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("part one, "))
		w.(http.Flusher).Flush()
		arrived.Done()
		select { // both are mid-download before either finishes
		case <-both:
		case <-time.After(10 * time.Second):
		}
		w.Write([]byte(r.URL.Path))
	}))
	defer srv.Close()
	errs := make(chan error, 2)
	for _, p := range []string{"/one", "/two"} {
		go func() {
			_, err := Download(testCtx(t), srv.URL+p, dir, "same.txt", Options{})
			errs <- err
		}()
	}
	var ok, exists int
	for range 2 {
		switch err := <-errs; {
		case err == nil:
			ok++
		case errors.Is(err, ErrExists):
			exists++
		default:
			t.Fatal(err)
		}
	}
	if ok != 1 || exists != 1 {
		t.Fatalf("%d succeeded, %d found it existing", ok, exists)
	}
	wantTree(t, dir, "same.txt")
}

func TestEscapes(t *testing.T) {
	srv, hits := fileServer(t, []byte("data"))
	root, outside := pathTree(t)
	before := tree(t, root)
	for _, rel := range []string{"../x", "a/../../x", "out-link/x", "abs-out-link/x", "sub/up-out/x", "file-out", "dangling/x"} {
		for _, overwrite := range []bool{false, true} {
			_, err := Download(testCtx(t), srv.URL+"/x", root, rel, Options{Overwrite: overwrite})
			if !errors.Is(err, ErrEscape) || Code(err) != "forbidden" {
				t.Errorf("%q: %v, want ErrEscape", rel, err)
			}
		}
	}
	for _, rel := range []string{"/tmp/x", filepath.Join(outside, "x"), "a\x00b", "sub/"} {
		if _, err := Download(testCtx(t), srv.URL+"/x", root, rel, Options{}); !errors.Is(err, ErrBadPath) {
			t.Errorf("%q: %v, want ErrBadPath", rel, err)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("the server was asked %d times for refused paths", hits.Load())
	}
	wantTree(t, outside, "secret")
	wantFile(t, filepath.Join(outside, "secret"), []byte("x"))
	if got := tree(t, root); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Fatalf("root changed: %q", got)
	}

	// A symlink inside the directory is followed.
	res, err := Download(testCtx(t), srv.URL+"/x", root, "abs-in-link/new/y.txt", Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantFile(t, filepath.Join(root, "sub", "new", "y.txt"), []byte("data"))
	if res.Path != filepath.Join(root, "abs-in-link/new/y.txt") {
		t.Fatalf("path %s", res.Path)
	}

	// The directory given through a symlink is resolved first.
	link := filepath.Join(t.TempDir(), "session")
	os.Symlink(root, link)
	if _, err := Download(testCtx(t), srv.URL+"/x", link, "via-link.txt", Options{}); err != nil {
		t.Fatal(err)
	}
	wantFile(t, filepath.Join(root, "via-link.txt"), []byte("data"))
}

func TestCancel(t *testing.T) {
	dir := t.TempDir()
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000")
		w.Write(payload(64 << 10))
		w.(http.Flusher).Flush()
		select { // then nothing more until the client gives up
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := Download(ctx, srv.URL+"/slow", dir, "deep/er/slow.bin", Options{})
		done <- err
	}()
	// Wait until the temporary file is there and has data: mid-download.
	deadline := time.Now().Add(10 * time.Second)
	for {
		ents, _ := os.ReadDir(filepath.Join(dir, "deep", "er"))
		if len(ents) == 1 && strings.HasPrefix(ents[0].Name(), ".corral-download-") {
			if fi, err := ents[0].Info(); err == nil && fi.Size() > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no temporary file appeared: %q", tree(t, dir))
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || Code(err) != "unavailable" {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Download did not return after cancel")
	}
	wantTree(t, dir) // the temporary file and the directories made for it are gone
}

func TestCode(t *testing.T) {
	for err, want := range map[error]string{
		nil:                                   "",
		newErr(ErrBadURL, nil, "x"):           "bad_request",
		newErr(ErrBadPath, nil, "x"):          "bad_request",
		newErr(ErrEscape, nil, "x"):           "forbidden",
		newErr(ErrDenied, nil, "x"):           "forbidden",
		newErr(ErrNotFound, nil, "x"):         "not_found",
		newErr(ErrExists, nil, "x"):           "conflict",
		newErr(ErrTooLarge, nil, "x"):         "too_large",
		newErr(ErrUnavailable, nil, "x"):      "unavailable",
		fmt.Errorf("w: %w", context.Canceled): "unavailable",
		errors.New("disk full"):               "internal",
	} {
		if got := Code(err); got != want {
			t.Errorf("Code(%v) = %q, want %q", err, got, want)
		}
	}
	e := newErr(ErrUnavailable, context.DeadlineExceeded, "reading")
	if !errors.Is(e, context.DeadlineExceeded) || errors.Is(e, ErrNotFound) || e.Error() != "reading: context deadline exceeded" {
		t.Fatalf("%v", e)
	}
}

func TestS3ConfigFromEnv(t *testing.T) {
	env := map[string]string{
		"CORRAL_S3_ENDPOINT": "minio.local:9000", "AWS_ACCESS_KEY_ID": "ak", "AWS_SECRET_ACCESS_KEY": "sk",
		"AWS_SESSION_TOKEN": "tok", "AWS_DEFAULT_REGION": "eu-west-1", "CORRAL_S3_INSECURE": "1",
	}
	c := S3ConfigFromEnv(func(k string) string { return env[k] })
	want := S3Config{Endpoint: "minio.local:9000", AccessKey: "ak", SecretKey: "sk", SessionToken: "tok", Region: "eu-west-1", Insecure: true}
	if c != want {
		t.Fatalf("%+v", c)
	}
	env["AWS_REGION"] = "us-east-2"
	if c := S3ConfigFromEnv(func(k string) string { return env[k] }); c.Region != "us-east-2" {
		t.Fatalf("AWS_REGION first: %+v", c)
	}
	for _, tc := range []struct {
		cfg    S3Config
		host   string
		secure bool
		bad    bool
	}{
		{S3Config{}, "s3.amazonaws.com", true, false},
		{S3Config{Endpoint: "h:9000"}, "h:9000", true, false},
		{S3Config{Endpoint: "h:9000", Insecure: true}, "h:9000", false, false},
		{S3Config{Endpoint: "http://h:9000"}, "h:9000", false, false},
		{S3Config{Endpoint: "https://h:9000/", Insecure: true}, "h:9000", true, false},
		{S3Config{Endpoint: "ftp://h"}, "", false, true},
		{S3Config{Endpoint: "http://h/path"}, "", false, true},
		{S3Config{Endpoint: "h/path"}, "", false, true},
	} {
		host, secure, err := tc.cfg.hostSecure()
		if (err != nil) != tc.bad || host != tc.host || secure != tc.secure {
			t.Errorf("%+v: %q %v %v", tc.cfg, host, secure, err)
		}
	}
}

// A data: URL is the file itself (an upload from the browser): saved by
// the same rules, and it needs a path.
func TestDataURL(t *testing.T) {
	dir := t.TempDir()
	res, err := Download(testCtx(t), "data:image/png;base64,aGVsbG8=", dir, "shot.png", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "shot.png")); string(b) != "hello" || res.Size != 5 {
		t.Errorf("saved %q (%+v)", b, res)
	}
	if _, err := Download(testCtx(t), "data:image/png;base64,aGVsbG8=", dir, "shot.png", Options{}); !errors.Is(err, ErrExists) {
		t.Errorf("second save: %v, want ErrExists", err)
	}
	if _, err := Download(testCtx(t), "data:;base64,aGVsbG8=", dir, "../out.png", Options{}); err == nil {
		t.Error("a data: url escaped the directory")
	}
	if _, err := Download(testCtx(t), "data:;base64,aGVsbG8=", dir, "", Options{}); !errors.Is(err, ErrBadPath) {
		t.Errorf("no path: %v", err)
	}
	for _, u := range []string{"data:text/plain,hello", "data:;base64,@@@", "data:"} {
		if _, err := Download(testCtx(t), u, dir, "x", Options{}); !errors.Is(err, ErrBadURL) {
			t.Errorf("Download(%q) = %v, want ErrBadURL", u, err)
		}
	}
}
