package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// The S3 tests run against a real S3 server, Versity S3 Gateway, with a
// temporary directory as its storage.
const (
	versitygwInstall = "go install github.com/versity/versitygw/cmd/versitygw@v1.8.0 (or scripts/setup.sh --test)"
	requireEnv       = "CORRAL_REQUIRE_CLAUDE" // CI: fail instead of skipping
	s3Access         = "corraltestaccess"
	s3Secret         = "corraltestsecret0123456789"
	s3Region         = "us-east-1"
)

// versitygw finds the binary: $CORRAL_VERSITYGW, versitygw on PATH, or
// $(go env GOPATH)/bin/versitygw. Missing, the test skips, or fails when
// CORRAL_REQUIRE_CLAUDE is set.
func versitygw(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CORRAL_VERSITYGW"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("CORRAL_VERSITYGW=%s: %v", p, err)
		}
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		for _, gp := range filepath.SplitList(strings.TrimSpace(string(out))) {
			p := filepath.Join(gp, "bin", "versitygw")
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if os.Getenv(requireEnv) != "" {
		t.Fatalf("versitygw not found; install it with: %s (%s is set)", versitygwInstall, requireEnv)
	}
	t.Skipf("skipping: versitygw not found; install it with: %s; set %s=1 to fail instead", versitygwInstall, requireEnv)
	return ""
}

// lockedBuffer collects the server's output for a failing test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startS3 starts versitygw on 127.0.0.1 (a free port) over a temporary
// directory, waits until it answers, and stops it when the test ends. It
// returns the endpoint (host:port) and a client for setting up.
func startS3(t *testing.T) (string, *minio.Client) {
	t.Helper()
	bin := versitygw(t)
	for attempt := 1; ; attempt++ {
		endpoint, cl, err := tryStartS3(t, bin)
		if err == nil {
			return endpoint, cl
		}
		if attempt == 3 { // the port was taken between choosing and binding, or worse
			t.Fatalf("versitygw did not start: %v", err)
		}
		t.Logf("versitygw attempt %d: %v", attempt, err)
	}
}

func tryStartS3(t *testing.T, bin string) (string, *minio.Client, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := l.Addr().String()
	l.Close()

	out := &lockedBuffer{}
	cmd := exec.Command(bin, "--access", s3Access, "--secret", s3Secret, "--region", s3Region,
		"--port", endpoint, "--quiet", "posix", t.TempDir())
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // nothing of the user's
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}

	cl, err := minio.New(endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(s3Access, s3Secret, ""),
		Region: s3Region,
	})
	if err != nil {
		stop()
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := cl.ListBuckets(ctx)
		cancel()
		if err == nil {
			break
		}
		select {
		case <-exited:
			return "", nil, fmt.Errorf("exited: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("no answer on %s within 20 s (%v): %s", endpoint, err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("versitygw output:\n%s", out.String())
		}
	})
	return endpoint, cl, nil
}

func TestS3(t *testing.T) {
	start := time.Now()
	endpoint, cl := startS3(t)
	t.Logf("versitygw answering on %s after %v", endpoint, time.Since(start).Round(time.Millisecond))
	ctx := testCtx(t)

	const bucket = "corral-test"
	if err := cl.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: s3Region}); err != nil {
		t.Fatal(err)
	}
	put := func(key string, data []byte) {
		t.Helper()
		if _, err := cl.PutObject(ctx, bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	small := []byte("hello from versitygw\n")
	large := payload(3<<20 + 17)
	big := payload(5000)
	put("docs/hello.txt", small)
	put("data/large.bin", large)
	put("data/big.bin", big)
	put("dir/with space/a b.txt", small)

	cfg := S3Config{Endpoint: endpoint, AccessKey: s3Access, SecretKey: s3Secret, Region: s3Region, Insecure: true}
	opts := Options{S3: cfg}
	presign := func(key string) string {
		t.Helper()
		u, err := cl.PresignedGetObject(ctx, bucket, key, 5*time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		return u.String()
	}

	t.Run("s3 url", func(t *testing.T) {
		dir := t.TempDir()
		res, err := Download(ctx, "s3://"+bucket+"/docs/hello.txt", dir, "", opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Rel != "hello.txt" || res.Size != int64(len(small)) || res.SHA256 != sum(small) {
			t.Fatalf("%+v", res)
		}
		wantFile(t, filepath.Join(dir, "hello.txt"), small)

		res, err = Download(ctx, "s3://"+bucket+"/data/large.bin", dir, "in/here/large.bin", opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.SHA256 != sum(large) {
			t.Fatalf("%+v", res)
		}
		wantFile(t, filepath.Join(dir, "in", "here", "large.bin"), large)

		res, err = Download(ctx, "s3://"+bucket+"/dir/with space/a b.txt", dir, "", opts)
		if err != nil || res.Rel != "a b.txt" {
			t.Fatalf("%+v %v", res, err)
		}
		wantTree(t, dir, "hello.txt", "in/", "in/here/", "in/here/large.bin", "a b.txt")
	})

	t.Run("s3 url from env", func(t *testing.T) {
		t.Setenv("CORRAL_S3_ENDPOINT", "http://"+endpoint)
		t.Setenv("AWS_ACCESS_KEY_ID", s3Access)
		t.Setenv("AWS_SECRET_ACCESS_KEY", s3Secret)
		t.Setenv("AWS_SESSION_TOKEN", "")
		t.Setenv("AWS_REGION", "") // asked from the server
		t.Setenv("AWS_DEFAULT_REGION", "")
		dir := t.TempDir()
		if _, err := Download(ctx, "s3://"+bucket+"/docs/hello.txt", dir, "env.txt", Options{}); err != nil {
			t.Fatal(err)
		}
		wantFile(t, filepath.Join(dir, "env.txt"), small)
	})

	t.Run("presigned", func(t *testing.T) {
		dir := t.TempDir()
		res, err := Download(ctx, presign("data/large.bin"), dir, "", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Rel != "large.bin" || res.SHA256 != sum(large) {
			t.Fatalf("%+v", res)
		}
		wantFile(t, res.Path, large)

		// A tampered signature: the server refuses, the error does not show it.
		u := presign("docs/hello.txt")
		bad := u[:len(u)-4] + "0000"
		_, err = Download(ctx, bad, dir, "tampered.txt", Options{})
		if !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), "Signature=") {
			t.Fatalf("tampered: %v", err)
		}
		wantTree(t, dir, "large.bin")
	})

	t.Run("missing", func(t *testing.T) {
		dir := t.TempDir()
		for _, u := range []string{"s3://" + bucket + "/no/such.txt", "s3://no-such-bucket/x.txt"} {
			_, err := Download(ctx, u, dir, "", opts)
			if !errors.Is(err, ErrNotFound) || Code(err) != "not_found" || !strings.Contains(err.Error(), u) {
				t.Errorf("%s: %v", u, err)
			}
		}
		_, err := Download(ctx, presign("no/such.txt"), dir, "", Options{})
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "404") {
			t.Errorf("presigned missing: %v", err)
		}
		wantTree(t, dir)
	})

	t.Run("bad credentials", func(t *testing.T) {
		dir := t.TempDir()
		wrong := cfg
		wrong.SecretKey = "wrong-secret-key-0000"
		_, err := Download(ctx, "s3://"+bucket+"/docs/hello.txt", dir, "", Options{S3: wrong})
		if !errors.Is(err, ErrDenied) || Code(err) != "forbidden" {
			t.Fatalf("wrong secret: %v", err)
		}
		wrong = cfg
		wrong.AccessKey = "nosuchaccesskey"
		_, err = Download(ctx, "s3://"+bucket+"/docs/hello.txt", dir, "", Options{S3: wrong})
		if !errors.Is(err, ErrDenied) {
			t.Fatalf("unknown access key: %v", err)
		}
		wantTree(t, dir)
	})

	t.Run("too large", func(t *testing.T) {
		dir := t.TempDir()
		small := Options{S3: cfg, MaxBytes: 4999}
		_, err := Download(ctx, "s3://"+bucket+"/data/big.bin", dir, "new/big.bin", small)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "5000 bytes") {
			t.Fatalf("s3: %v", err)
		}
		_, err = Download(ctx, presign("data/big.bin"), dir, "new/big.bin", Options{MaxBytes: 4999})
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("presigned: %v", err)
		}
		wantTree(t, dir)
		small.MaxBytes = 5000
		if _, err := Download(ctx, "s3://"+bucket+"/data/big.bin", dir, "new/big.bin", small); err != nil {
			t.Fatal(err)
		}
		wantFile(t, filepath.Join(dir, "new", "big.bin"), big)
	})

	t.Run("exists", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("mine"), 0o644)
		_, err := Download(ctx, "s3://"+bucket+"/docs/hello.txt", dir, "", opts)
		if !errors.Is(err, ErrExists) {
			t.Fatalf("%v", err)
		}
		wantFile(t, filepath.Join(dir, "hello.txt"), []byte("mine"))
		o := opts
		o.Overwrite = true
		if _, err := Download(ctx, "s3://"+bucket+"/docs/hello.txt", dir, "", o); err != nil {
			t.Fatal(err)
		}
		wantFile(t, filepath.Join(dir, "hello.txt"), small)
	})

	t.Run("escape", func(t *testing.T) {
		root, outside := pathTree(t)
		for _, rel := range []string{"../hello.txt", "out-link/hello.txt", "sub/up-out/hello.txt"} {
			if _, err := Download(ctx, "s3://"+bucket+"/docs/hello.txt", root, rel, opts); !errors.Is(err, ErrEscape) {
				t.Errorf("%s: %v", rel, err)
			}
		}
		wantTree(t, outside, "secret")
	})

	t.Run("cancel", func(t *testing.T) {
		dir := t.TempDir()
		cctx, cancel := context.WithCancel(ctx)
		// Cancel from inside the transfer: after the first body bytes are read.
		tr := &cancelAfter{RoundTripper: http.DefaultTransport, after: 64 << 10, cancel: cancel}
		o := opts
		o.HTTPClient = &http.Client{Transport: tr}
		_, err := Download(cctx, "s3://"+bucket+"/data/large.bin", dir, "large.bin", o)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%v", err)
		}
		if !tr.fired() {
			t.Fatal("the cancel was not reached mid-transfer")
		}
		wantTree(t, dir)
	})
}

// cancelAfter is a transport that cancels the download once `after` bytes
// of a response body have been read.
type cancelAfter struct {
	http.RoundTripper
	after  int
	cancel context.CancelFunc
	mu     sync.Mutex
	read   int
	done   bool
}

func (c *cancelAfter) fired() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done
}

func (c *cancelAfter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.RoundTripper.RoundTrip(r)
	if err == nil && r.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
		resp.Body = &countingBody{ReadCloser: resp.Body, c: c}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	c *cancelAfter
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.c.mu.Lock()
	b.c.read += n
	fire := !b.c.done && b.c.read >= b.c.after
	if fire {
		b.c.done = true
	}
	b.c.mu.Unlock()
	if fire {
		b.c.cancel()
	}
	return n, err
}
