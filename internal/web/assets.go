package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

// dist is the UI built by scripts/build-web.sh. It may hold only .keep (a
// build without the UI still compiles): then a page says how to build it.
//
//go:embed all:dist
var dist embed.FS

// asset is one file of the UI, ready to serve.
type asset struct {
	body  []byte
	etag  string
	ctype string
}

func loadAssets(fsys fs.FS) map[string]asset {
	out := map[string]asset{}
	fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(path.Base(p), ".") {
			return nil
		}
		f, err := fsys.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			return nil
		}
		sum := sha256.Sum256(b)
		ct := mime.TypeByExtension(path.Ext(p))
		switch path.Ext(p) {
		case ".webmanifest":
			ct = "application/manifest+json"
		case ".js", ".mjs":
			ct = "text/javascript; charset=utf-8"
		}
		if ct == "" {
			ct = http.DetectContentType(b)
		}
		out["/"+p] = asset{body: b, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, ctype: ct}
		return nil
	})
	return out
}

const notBuilt = `<!doctype html><meta charset="utf-8"><title>corral</title>
<body style="font-family:system-ui;max-width:40em;margin:4em auto">
<h1>corral</h1><p>The web UI was not built into this binary. Build it with
<code>make build</code> (needs Node.js and npm), then restart <code>corral serve</code>.</p>
<p>The API works: <code>/api/v1/sessions</code>.</p></body>`

// assets serves the UI: its files by path, and index.html for every other
// path (the app routes itself). Files revalidate by ETag on every load, so
// a new binary's UI is picked up at once.
func (s *Server) assets() http.Handler {
	var files map[string]asset
	if s.opts.Assets != nil {
		files = loadAssets(s.opts.Assets)
	} else {
		sub, _ := fs.Sub(dist, "dist")
		files = loadAssets(sub)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		a, ok := files[r.URL.Path]
		if !ok {
			if path.Ext(r.URL.Path) != "" && r.URL.Path != "/index.html" {
				http.NotFound(w, r)
				return
			}
			a, ok = files["/index.html"]
			if !ok {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.Write([]byte(notBuilt))
				return
			}
		}
		h := w.Header()
		h.Set("Content-Type", a.ctype)
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", a.etag)
		if r.URL.Path == "/sw.js" {
			h.Set("Service-Worker-Allowed", "/")
		}
		if match := r.Header.Get("If-None-Match"); match == a.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if r.Method == http.MethodHead {
			return
		}
		w.Write(a.body)
	})
}
