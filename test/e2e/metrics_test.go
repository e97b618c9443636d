package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/datadir"
)

// scrapeMetrics GETs /metrics on a daemon's API socket.
func scrapeMetrics(t *testing.T, dataDir string) string {
	t.Helper()
	sock := datadir.Socket(dataDir, datadir.APISocket)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}}
	resp, err := c.Get("http://x/metrics")
	if err != nil {
		t.Fatalf("GET /metrics on %s: %v", sock, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /metrics on %s: %d %v\n%s", sock, resp.StatusCode, err, b)
	}
	return string(b)
}

// metricSum adds up the samples of every series whose name and labels
// start with prefix (the text format sorts labels by name).
func metricSum(scrape, prefix string) (float64, bool) {
	var n float64
	found := false
	for _, l := range strings.Split(scrape, "\n") {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		if f, err := strconv.ParseFloat(l[i+1:], 64); err == nil {
			n += f
			found = true
		}
	}
	return n, found
}
