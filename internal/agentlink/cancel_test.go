package agentlink_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/agent"
	"github.com/corral-dev/corral/internal/agentlink"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/backend"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/events"
	"github.com/corral-dev/corral/internal/hub"
	"github.com/corral-dev/corral/internal/identity"
	"github.com/corral-dev/corral/internal/link"
	"github.com/corral-dev/corral/internal/store"
)

// joined is a real agent (with its private tmux server) joined to a real
// hub by the in-memory link, as corral serve does.
type joined struct {
	ag  *agent.Agent
	hub *hub.Hub
	dir string
}

func join(t *testing.T) *joined {
	t.Helper()
	if _, err := os.Stat("/usr/bin/tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	dir, err := os.MkdirTemp("", "corral-al-")
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "corral.db"))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin", "SHELL=/bin/sh", "PS1=$ "}
	ag, err := agent.New(agent.Config{DataDir: dir, Store: st, Env: env, Home: home, Bus: events.New(events.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := ag.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hb, err := hub.New(ctx, hub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	info := hub.DeviceIdentity{ID: "local", Name: "box", Owner: identity.Local, Local: true}
	synced := hb.WaitSynced(info.ID)
	hubEnd, agentEnd := link.Pipe()
	done := make(chan struct{}, 2)
	go func() {
		agentlink.Serve(ctx, agentEnd, agentlink.Options{Agent: ag, Policy: agentlink.FullPolicy()})
		done <- struct{}{}
	}()
	go func() { hb.ServeLocal(ctx, info, hubEnd); done <- struct{}{} }()
	t.Cleanup(func() {
		cancel()
		<-done
		<-done
		ag.Close()
		execTmux(dir, "kill-server")
		st.Close()
		os.RemoveAll(dir)
	})
	select {
	case <-synced:
	case <-time.After(30 * time.Second):
		t.Fatal("the agent never synced")
	}
	return &joined{ag: ag, hub: hb, dir: dir}
}

func execTmux(dir string, args ...string) {
	cmd := exec.Command("tmux", append([]string{"-S", datadir.Socket(dir, datadir.TmuxSocket)}, args...)...)
	cmd.Run()
}

func userCtx(t *testing.T) context.Context {
	return identity.With(t.Context(), identity.Local)
}

// goroutinesIn counts the goroutines with a frame in a package.
func goroutinesIn(pkg string) int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, pkg) {
			n++
		}
	}
	return n
}

// TestCancelDownloadAcrossTheLink: a download the hub's caller gives up on
// (its context ends: the browser or CLI went away) stops on the agent: the
// agent's GET is closed, no file and no temporary file is left, and no
// goroutine of the download remains.
func TestCancelDownloadAcrossTheLink(t *testing.T) {
	j := join(t)
	proj := t.TempDir()
	sess, err := backend.Call(userCtx(t), j.hub, api.OpCreate, api.CreateRequest{Dir: proj, Shell: true})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	gone := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000")
		w.WriteHeader(200)
		w.Write(make([]byte, 1000))
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done() // until the client hangs up
		close(gone)
	}))
	// Unblock the handler even if the test fails, so Close returns.
	defer slow.Close()
	defer slow.CloseClientConnections()

	ctx, cancel := context.WithCancel(userCtx(t))
	res := make(chan error, 1)
	go func() {
		_, err := backend.Call(ctx, j.hub, api.OpDownload, api.DownloadRequest{SessionRef: api.SessionRef{ID: sess.ID}, URL: slow.URL + "/big.bin"})
		res <- err
	}()
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the download never started")
	}
	cancel()
	if err := <-res; err == nil {
		t.Fatal("a cancelled download succeeded")
	}
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent's download went on after the hub's caller gave up")
	}
	deadline := time.Now().Add(10 * time.Second)
	for goroutinesIn("internal/fetch.") > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines of the download left", goroutinesIn("internal/fetch."))
		}
		time.Sleep(20 * time.Millisecond)
	}
	entries, _ := os.ReadDir(proj)
	for _, e := range entries {
		t.Errorf("left in the session's directory: %s", e.Name())
	}
}
