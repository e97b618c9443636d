package agent

import (
	"context"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/fetch"
)

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

// Devices: an agent is one machine, with no hub in front of it.
func (a *Agent) Devices(ctx context.Context) ([]api.Device, error) {
	return []api.Device{}, nil
}
