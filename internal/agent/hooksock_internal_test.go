package agent

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestRateLog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	var r rateLog
	t0 := time.Unix(1000, 0)
	for i := range 100 {
		r.warn(log, t0.Add(time.Duration(i)*time.Millisecond), "bad")
	}
	if n := strings.Count(buf.String(), "msg=bad"); n != deliveryWarnBurst {
		t.Fatalf("%d warnings in a window, want %d", n, deliveryWarnBurst)
	}
	r.warn(log, t0.Add(deliveryWarnWindow+time.Second), "bad")
	if !strings.Contains(buf.String(), "left out") || !strings.Contains(buf.String(), "count=90") {
		t.Fatalf("no summary of the 90 left out:\n%s", buf.String())
	}
	if n := strings.Count(buf.String(), "msg=bad"); n != deliveryWarnBurst+1 {
		t.Fatalf("the next window's first warning: %d in all", n)
	}
}
