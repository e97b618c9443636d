package fetch

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"time"
	"unicode"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// maxRedirects is how many redirects an http(s) download follows.
const maxRedirects = 5

// S3Config is how s3:// URLs are reached.
type S3Config struct {
	// Endpoint is host:port or a URL (http:// or https://); empty means
	// s3.amazonaws.com.
	Endpoint     string
	AccessKey    string
	SecretKey    string
	SessionToken string
	Region       string // empty: asked from the server
	// Insecure uses http instead of https for a host:port Endpoint (a URL
	// Endpoint says itself).
	Insecure bool
}

// S3ConfigFromEnv reads CORRAL_S3_ENDPOINT, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION (or
// AWS_DEFAULT_REGION) and CORRAL_S3_INSECURE (1 or true: plain http).
func S3ConfigFromEnv(getenv func(string) string) S3Config {
	region := getenv("AWS_REGION")
	if region == "" {
		region = getenv("AWS_DEFAULT_REGION")
	}
	ins := strings.ToLower(strings.TrimSpace(getenv("CORRAL_S3_INSECURE")))
	return S3Config{
		Endpoint:     strings.TrimSpace(getenv("CORRAL_S3_ENDPOINT")),
		AccessKey:    getenv("AWS_ACCESS_KEY_ID"),
		SecretKey:    getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken: getenv("AWS_SESSION_TOKEN"),
		Region:       region,
		Insecure:     ins == "1" || ins == "true" || ins == "yes",
	}
}

// hostSecure returns the endpoint's host[:port] and whether to use TLS.
func (c S3Config) hostSecure() (string, bool, error) {
	e := c.Endpoint
	if e == "" {
		return "s3.amazonaws.com", true, nil
	}
	if !strings.Contains(e, "://") {
		if strings.ContainsAny(e, "/?#@") {
			return "", false, fmt.Errorf("fetch: S3 endpoint %q: want host:port or a URL", e)
		}
		return e, !c.Insecure, nil
	}
	u, err := url.Parse(e)
	if err != nil {
		return "", false, fmt.Errorf("fetch: S3 endpoint: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", false, fmt.Errorf("fetch: S3 endpoint %q: want host:port, http://host:port or https://host:port", e)
	}
	return u.Host, u.Scheme == "https", nil
}

// source is where a download comes from.
type source interface {
	// open starts the download: the body and its size, -1 when unknown.
	open(ctx context.Context, opts Options) (io.ReadCloser, int64, error)
	// baseName is the default file name.
	baseName() string
	// redacted is the URL for messages, without credentials.
	redacted() string
}

func parseURL(raw string) (source, error) {
	if raw == "" {
		return nil, newErr(ErrBadURL, nil, "no url")
	}
	for _, r := range raw {
		if unicode.IsControl(r) {
			return nil, newErr(ErrBadURL, nil, "url has a control character")
		}
	}
	if len(raw) >= 5 && strings.EqualFold(raw[:5], "data:") {
		return parseData(raw[5:])
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, newErr(ErrBadURL, nil, "url %q has no scheme; want https://, http:// or s3://", shorten(raw))
	}
	switch strings.ToLower(scheme) {
	case "s3":
		// s3://bucket/key, the key taken literally as the AWS CLI does.
		bucket, key, _ := strings.Cut(rest, "/")
		if err := s3utils.CheckValidBucketNameStrict(bucket); err != nil {
			return nil, newErr(ErrBadURL, err, "s3 url: bucket %q", bucket)
		}
		if key == "" || strings.HasSuffix(key, "/") {
			return nil, newErr(ErrBadURL, nil, "s3 url %q names no object", shorten(raw))
		}
		if err := s3utils.CheckValidObjectName(key); err != nil {
			return nil, newErr(ErrBadURL, err, "s3 url: key")
		}
		return s3Source{bucket: bucket, key: key}, nil
	case "http", "https":
		if strings.Contains(raw, " ") {
			return nil, newErr(ErrBadURL, nil, "url has a space; encode it as %%20")
		}
		u, err := url.Parse(raw)
		if err != nil {
			return nil, newErr(ErrBadURL, nil, "url does not parse") // the error would repeat the URL
		}
		if u.Host == "" || u.Hostname() == "" {
			return nil, newErr(ErrBadURL, nil, "url %s has no host", redactURL(u))
		}
		u.Fragment, u.RawFragment = "", ""
		return httpSource{u: u}, nil
	}
	return nil, newErr(ErrBadURL, nil, "url scheme %q is not allowed; want https://, http:// or s3://", scheme)
}

// dataSource is the content itself, in a data: URL: a file the browser
// sends (an upload, a pasted screenshot), saved by the same rules as a
// download. Only base64 data is taken; the request's size limit bounds it.
type dataSource struct{ data []byte }

func parseData(rest string) (source, error) {
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok || !strings.HasSuffix(strings.ToLower(meta), ";base64") {
		return nil, newErr(ErrBadURL, nil, "a data: url must be base64 (data:<type>;base64,<data>)")
	}
	b, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return nil, newErr(ErrBadURL, nil, "a data: url's base64 does not decode")
	}
	return dataSource{data: b}, nil
}

func (d dataSource) open(context.Context, Options) (io.ReadCloser, int64, error) {
	return io.NopCloser(bytes.NewReader(d.data)), int64(len(d.data)), nil
}

func (d dataSource) baseName() string { return "" }

func (d dataSource) redacted() string { return fmt.Sprintf("the data sent (%d bytes)", len(d.data)) }

func shorten(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// redactURL drops what may carry credentials: user info and the query
// (a presigned URL's signature).
func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		c.RawQuery = ""
		c.ForceQuery = true // "…?" shows a query was there
	}
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// redactErr takes the URL out of net/http's errors.
func redactErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			ue.URL = redactURL(u)
		} else {
			ue.URL = "(url)"
		}
	}
	return err
}

// ---- http(s) ----

type httpSource struct{ u *url.URL }

func (s httpSource) baseName() string { return path.Base(s.u.Path) }
func (s httpSource) redacted() string { return redactURL(s.u) }

var defaultTransport http.RoundTripper = func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 60 * time.Second // for the server to start answering
	return t
}()

func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return newErr(ErrUnavailable, nil, "stopped after %d redirects", maxRedirects)
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return newErr(ErrBadURL, nil, "redirected to a %q url", req.URL.Scheme)
	}
	return nil
}

func (s httpSource) open(ctx context.Context, opts Options) (io.ReadCloser, int64, error) {
	var c http.Client
	if opts.HTTPClient != nil {
		c = *opts.HTTPClient
	} else {
		c.Transport = defaultTransport
	}
	c.CheckRedirect = checkRedirect
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.u.String(), nil)
	if err != nil {
		return nil, 0, newErr(ErrBadURL, nil, "bad url %s", s.redacted())
	}
	// The bytes as stored: no transparent decompression.
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("User-Agent", "corral-fetch")
	resp, err := c.Do(req)
	if err != nil {
		var fe *Error
		switch {
		case errors.As(err, &fe):
			return nil, 0, fe
		case ctx.Err() != nil:
			return nil, 0, newErr(nil, ctx.Err(), "download of %s stopped", s.redacted())
		}
		return nil, 0, newErr(ErrUnavailable, redactErr(err), "fetching")
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 || resp.StatusCode == http.StatusPartialContent {
		detail := s3ErrorDetail(resp.Body)
		resp.Body.Close()
		kind := ErrUnavailable
		switch resp.StatusCode {
		case http.StatusNotFound, http.StatusGone:
			kind = ErrNotFound
		case http.StatusUnauthorized, http.StatusForbidden:
			kind = ErrDenied
		}
		return nil, 0, newErr(kind, nil, "GET %s: %s%s", redactURL(resp.Request.URL), resp.Status, detail)
	}
	return resp.Body, resp.ContentLength, nil
}

// s3ErrorDetail pulls Code and Message out of an S3 error body (an expired
// presigned URL says so there), if it is one.
func s3ErrorDetail(body io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(body, 4096))
	s := string(b)
	tag := func(name string) string {
		_, after, ok := strings.Cut(s, "<"+name+">")
		if !ok {
			return ""
		}
		v, _, ok := strings.Cut(after, "</"+name+">")
		if !ok || len(v) > 200 {
			return ""
		}
		return strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return -1
			}
			return r
		}, v)
	}
	code, msg := tag("Code"), tag("Message")
	switch {
	case code != "" && msg != "":
		return " (" + code + ": " + msg + ")"
	case code != "":
		return " (" + code + ")"
	}
	return ""
}

// ---- s3:// ----

type s3Source struct{ bucket, key string }

func (s s3Source) baseName() string { return path.Base(s.key) }
func (s s3Source) redacted() string { return "s3://" + s.bucket + "/" + s.key }

func (s s3Source) open(ctx context.Context, opts Options) (io.ReadCloser, int64, error) {
	cfg := opts.S3
	if cfg == (S3Config{}) {
		cfg = S3ConfigFromEnv(os.Getenv)
	}
	host, secure, err := cfg.hostSecure()
	if err != nil {
		return nil, 0, err
	}
	mo := &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken),
		Secure: secure,
		Region: cfg.Region,
	}
	if opts.HTTPClient != nil && opts.HTTPClient.Transport != nil {
		mo.Transport = opts.HTTPClient.Transport
	}
	// Core's GetObject is one GET: the error body (not a HEAD's bare status)
	// tells what went wrong, and the body follows the headers.
	cl, err := minio.NewCore(host, mo)
	if err != nil {
		return nil, 0, fmt.Errorf("fetch: S3 client: %w", err)
	}
	body, info, _, err := cl.GetObject(ctx, s.bucket, s.key, minio.GetObjectOptions{})
	if err != nil {
		return nil, 0, s.mapErr(ctx, err)
	}
	return body, info.Size, nil
}

func (s s3Source) mapErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return newErr(nil, ctx.Err(), "download of %s stopped", s.redacted())
	}
	er := minio.ToErrorResponse(err)
	switch er.Code {
	case "NoSuchKey", "NoSuchBucket", "NoSuchVersion":
		return newErr(ErrNotFound, err, "%s", s.redacted())
	case "AccessDenied", "AllAccessDisabled", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken",
		"InvalidToken", "TokenRefreshRequired",
		"XAdminUserNotFound": // versitygw's answer (with 404) to an unknown access key
		return newErr(ErrDenied, err, "%s", s.redacted())
	}
	switch er.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return newErr(ErrDenied, err, "%s", s.redacted())
	case http.StatusNotFound:
		if er.Code == "" { // an answer without a body
			return newErr(ErrNotFound, err, "%s", s.redacted())
		}
	}
	return newErr(ErrUnavailable, redactErr(err), "%s", s.redacted())
}
