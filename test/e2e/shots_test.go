package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Screenshots at chosen moments of the browser tests: the tour in docs/
// (scripts/screenshots.sh sets CORRAL_SCREENSHOTS=docs/tour) and CI's
// artifacts (CORRAL_ARTIFACTS). With neither set nothing is captured, so the
// tests run and assert the same either way.

// shotDir is where saveShot writes, or "" for nowhere.
func shotDir() string {
	if d := os.Getenv("CORRAL_SCREENSHOTS"); d != "" {
		return d
	}
	return os.Getenv("CORRAL_ARTIFACTS")
}

// maxShotScale caps the device pixels per CSS pixel of a shot: a phone
// emulated at 3x is saved at 2x, sharp enough and half the bytes.
const maxShotScale = 2

// viewportBox is the visible part of the page, in CSS pixels.
type viewportBox struct {
	X   float64 `json:"x"`
	Y   float64 `json:"y"`
	W   float64 `json:"w"`
	H   float64 `json:"h"`
	DPR float64 `json:"dpr"`
}

const viewportJS = `(() => { const v = window.visualViewport;
  return {x: v.pageLeft, y: v.pageTop, w: v.width, h: v.height, dpr: window.devicePixelRatio}; })()`

// saveShot saves what the viewport shows now as name.png (only the
// viewport: a tour picture is what the person sees, and stays small).
func saveShot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := shotDir()
	if dir == "" {
		return
	}
	v := get(t, ctx, 5*time.Second, "the viewport", chromedp.Evaluate[viewportBox](viewportJS))
	scale := 1.0
	if v.DPR > maxShotScale {
		scale = maxShotScale / v.DPR
	}
	shot := get(t, ctx, 10*time.Second, "screenshot "+name, chromedp.Action[[]byte](func(ctx context.Context, tg *chromedp.Target) ([]byte, error) {
		r, err := cdp.Call(ctx, tg, page.CaptureScreenshot, page.CaptureScreenshotParams{
			FromSurface: new(true),
			Clip:        &page.Viewport{X: v.X, Y: v.Y, Width: v.W, Height: v.H, Scale: scale},
		})
		if err != nil {
			return nil, err
		}
		return r.Data, nil
	}))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), shot, 0o644); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
	}
}
