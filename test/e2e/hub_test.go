package e2e

// A hub with agents on "machines" of their own: each agent has its own data
// directory, HOME, tmux server and fake model, and dials the hub over the
// real device link (docs/protocol.md). The hub and the agents are the real
// corral binary; the browsers and the hostile devices are this test,
// speaking the real protocols over 127.0.0.1.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/corral-dev/corral/internal/agentlink"
	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/client"
	"github.com/corral-dev/corral/internal/datadir"
	"github.com/corral-dev/corral/internal/devicekey"
	"github.com/corral-dev/corral/internal/link"
	"github.com/corral-dev/corral/internal/proc"
	"github.com/corral-dev/corral/internal/testkit/claudeenv"
	"github.com/corral-dev/corral/internal/testkit/fakeapi"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

// ---------------------------------------------------------------------------
// The hub process.

// hubProc is a `corral hub` with its own data directory. A restart keeps the
// data directory and the port.
type hubProc struct {
	t       *testing.T
	dataDir string
	env     []string
	addr    string // host:port; "127.0.0.1:0" until the first start
	url     string // http://addr
	out     *testio.SyncBuffer
	args    []string // more flags of `corral hub`

	cmd  *exec.Cmd
	done chan struct{}
}

var hubURLRe = regexp.MustCompile(`corral hub: (http://\S+)`)

// newHubProc starts a hub on listen (e.g. "127.0.0.1:0"), with more flags
// of `corral hub` if given.
func newHubProc(t *testing.T, listen string, args ...string) *hubProc {
	t.Helper()
	return newHubProcEnv(t, listen, nil, args...)
}

// newHubProcEnv is newHubProc with more environment for the hub and its
// management commands (CORRAL_DB).
func newHubProcEnv(t *testing.T, listen string, env []string, args ...string) *hubProc {
	t.Helper()
	home := testio.TempDir(t, "corral-hubhome-")
	hp := &hubProc{t: t, dataDir: testio.TempDir(t, "corral-hub-"), addr: listen, out: &testio.SyncBuffer{}, args: args}
	hp.env = append(cleanEnv(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "GORACE=atexit_sleep_ms=0")
	hp.env = append(hp.env, env...)
	t.Cleanup(func() {
		hp.stop(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("corral hub log:\n%s", hp.log())
		}
	})
	hp.start()
	return hp
}

// restartablePort finds a free port on 127.0.0.1 below the kernel's
// ephemeral range, for a hub that is restarted on the same port: no
// outgoing connection (of this test or any other) can be given that port
// while the hub is down.
func restartablePort(t *testing.T) string {
	t.Helper()
	lo := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 2048 {
				lo = n
			}
		}
	}
	for range 100 {
		port := lo - 1 - rand.IntN(min(lo-1025, 10000))
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			ln.Close()
			return ln.Addr().String()
		}
	}
	t.Fatalf("no free port on 127.0.0.1 below %d", lo)
	return ""
}

// cleanEnv is this process's environment without what would tie a child
// to an outer tmux or corral.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "TMUX" || k == "TMUX_PANE" || strings.HasPrefix(k, "CORRAL_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// start runs the hub and waits until it prints its URL (it listens then).
func (hp *hubProc) start() {
	hp.t.Helper()
	before := len(hubURLRe.FindAllString(hp.log(), -1))
	cmd := exec.Command(corralBin, append([]string{"--data-dir", hp.dataDir, "hub", "--log-level", "debug", "--listen", hp.addr}, hp.args...)...)
	cmd.Env = hp.env
	cmd.Stdout, cmd.Stderr = hp.out, hp.out
	if err := cmd.Start(); err != nil {
		hp.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	hp.cmd, hp.done = cmd, done
	waitFor(hp.t, 20*time.Second, "corral hub to print its URL", func() bool {
		select {
		case <-done:
			hp.t.Fatalf("corral hub exited at start:\n%s", hp.log())
		default:
		}
		return len(hubURLRe.FindAllString(hp.log(), -1)) > before
	})
	all := hubURLRe.FindAllStringSubmatch(hp.log(), -1)
	hp.url = all[len(all)-1][1]
	hp.addr = strings.TrimPrefix(hp.url, "http://")
}

// stop ends the hub with a signal (SIGKILL for a crash) and waits for it.
func (hp *hubProc) stop(sig syscall.Signal) {
	if hp.cmd == nil {
		return
	}
	hp.cmd.Process.Signal(sig)
	select {
	case <-hp.done:
	case <-time.After(10 * time.Second):
		hp.cmd.Process.Kill()
		<-hp.done
	}
	hp.cmd = nil
}

func (hp *hubProc) pid() int { return hp.cmd.Process.Pid }

func (hp *hubProc) log() string {
	return hp.out.String()
}

// admin runs `corral hub ARGS` on the hub's data directory (the management
// commands work while the hub runs) and returns its stdout.
func (hp *hubProc) admin(t *testing.T, args ...string) string {
	t.Helper()
	return hp.adminIn(t, "", args...)
}

// adminIn is admin with stdin (a password).
func (hp *hubProc) adminIn(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, corralBin, append([]string{"--data-dir", hp.dataDir, "hub"}, args...)...)
	cmd.Env = hp.env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("corral hub %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return strings.TrimSpace(stdout.String())
}

// addDevice registers a device and returns its one-time enrolment token.
func (hp *hubProc) addDevice(t *testing.T, name, user string) string {
	t.Helper()
	tok := hp.admin(t, "device", "add", name, "--user", user)
	if !strings.HasPrefix(tok, "ce_") {
		t.Fatalf("device token %q", tok)
	}
	return tok
}

// allDevices is `corral hub device ls --json`: every device in the hub's
// database, with when it was last seen.
func (hp *hubProc) allDevices(t *testing.T) string {
	t.Helper()
	return hp.admin(t, "device", "ls", "--json")
}

// countLog counts the lines of the hub's log that contain substr.
func (hp *hubProc) countLog(substr string) int {
	n := 0
	for _, line := range strings.Split(hp.log(), "\n") {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

// The hub's log lines for a device link refused before the upgrade
// (internal/hub.LinkHandler): without a key, or with a key it does not
// know and no good enrolment token.
const (
	logRefusedNoKey = `msg="device link without a device key refused"`
	logRefusedToken = `msg="device link with a wrong, spent or expired enrolment token refused"`
	logRefusedKey   = `msg="device link with an unknown key and no enrolment token refused"`
)

func (hp *hubProc) refusals() int {
	return hp.countLog(`level=WARN msg="device link with`) + hp.countLog(`level=WARN msg="device link without`)
}

// The agent's log line when the hub refuses it (internal/agentlink.Run).
const logAgentRefused = "the hub refused this device"

// ---------------------------------------------------------------------------
// Users: their API, through the hub, with their token.

type hubUser struct {
	name  string
	token string
	hp    *hubProc
	c     *client.Client
}

func (hp *hubProc) addUser(t *testing.T, name string) *hubUser {
	t.Helper()
	tok := hp.admin(t, "user", "add", name)
	if !strings.HasPrefix(tok, "cu_") {
		t.Fatalf("user token %q", tok)
	}
	return &hubUser{name: name, token: tok, hp: hp, c: client.HTTP(hp.url, tok)}
}

// request sends one API request with the user's token and returns the
// status and body.
func (u *hubUser) request(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	return rawRequest(t, u.hp, u.token, method, path, body)
}

func rawRequest(t *testing.T, hp *hubProc, token, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, hp.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (u *hubUser) sessions(t *testing.T) []api.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := u.c.Sessions(ctx)
	if err != nil {
		t.Fatalf("%s's sessions through the hub: %v", u.name, err)
	}
	return l
}

// sessionsErr is sessions for polling across a hub restart.
func (u *hubUser) sessionsErr() ([]api.Session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return u.c.Sessions(ctx)
}

func (u *hubUser) devices(t *testing.T) []api.Device {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := u.c.Devices(ctx)
	if err != nil {
		t.Fatalf("%s's devices through the hub: %v", u.name, err)
	}
	return l
}

// lsJSON is `corral --hub URL --token T ls --json`, run as the CLI on h.
func (u *hubUser) lsJSON(t *testing.T, h *harness) []api.Session {
	t.Helper()
	out, err := h.corralErr("--hub", u.hp.url, "--token", u.token, "ls", "--json")
	if err != nil {
		t.Fatalf("corral --hub ls --json: %v\n%s", err, out)
	}
	var l []api.Session
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("corral --hub ls --json: %v\n%s", err, out)
	}
	return l
}

// waitSession waits until the user's list through the hub has a session
// that satisfies cond, and returns it.
func (u *hubUser) waitSession(t *testing.T, timeout time.Duration, what string, cond func(api.Session) bool) api.Session {
	t.Helper()
	var last []api.Session
	deadline := time.Now().Add(timeout)
	for {
		l, err := u.sessionsErr()
		if err == nil {
			last = l
			for _, s := range l {
				if cond(s) {
					return s
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s in %s's list through the hub (last: %s, err %v)", timeout, what, u.name, summary(last), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (u *hubUser) waitOnline(t *testing.T, device string, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, fmt.Sprintf("device %s of %s online", device, u.name), func() bool {
		for _, d := range u.devices(t) {
			if d.Name == device && d.Online {
				return true
			}
		}
		return false
	})
}

func summary(l []api.Session) string {
	var b strings.Builder
	for _, s := range l {
		fmt.Fprintf(&b, "%s@%s=%s", s.ID, s.Device, s.Status)
		if s.Offline {
			b.WriteString("(offline)")
		}
		b.WriteString(" ")
	}
	return b.String()
}

func ids(l []api.Session) []string {
	var out []string
	for _, s := range l {
		out = append(out, s.ID)
	}
	sort.Strings(out)
	return out
}

// ---------------------------------------------------------------------------
// Agents: a machine each, like newHarness's, running `corral agent`.

type agentOptions struct {
	fake fakeapi.Options
	// claude: the test starts Claude sessions (else only shells, and a
	// missing claude does not skip it).
	claude bool
	// args are more flags of corral agent (its policy).
	args []string
	// key, when set, is a device key file the machine starts with (a copy
	// of another machine's identity).
	key string
}

// newAgent starts `corral agent --hub URL` on a machine of its own (HOME,
// data directory, tmux server, fake model), with the enrolment token in
// $CORRAL_DEVICE_TOKEN. The harness's CLI (h.corral, h.ls, h.newSession,
// h.waitStatus) talks to the agent's own unix socket, so it shows the
// machine's local view.
func newAgent(t *testing.T, hubURL, token string, opts agentOptions) *harness {
	t.Helper()
	claudeenv.RequireTmux(t)
	if opts.claude {
		claudeenv.RequireClaude(t)
	}
	h := &harness{t: t}
	h.proj = testio.TempDir(t, "corral-proj-")
	if opts.fake.ToolDir == "" {
		opts.fake.ToolDir = h.proj
	}
	h.api = fakeapi.New(opts.fake)
	h.api.Start(t)
	h.claude = claudeenv.New(t, claudeenv.Options{BaseURL: h.api.URL(), Trust: []string{h.proj}})
	h.dataDir = testio.TempDir(t, "corral-data-")
	h.env = append(h.claude.Environ(), "CORRAL_HOME="+h.dataDir, "GORACE=atexit_sleep_ms=0", "CORRAL_DEVICE_TOKEN="+token)
	h.c = client.Unix(datadir.Socket(h.dataDir, datadir.APISocket))
	if opts.key != "" {
		b, err := os.ReadFile(opts.key)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(h.dataDir, datadir.DeviceKey), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The agent serves only its project directory.
	h.serveArgs = append([]string{"agent", "--log-level", "debug", "--hub", hubURL, "--root", h.proj}, opts.args...)
	t.Cleanup(func() {
		h.stopServe(syscall.SIGTERM)
		exec.Command("tmux", "-S", datadir.Socket(h.dataDir, datadir.TmuxSocket), "kill-server").Run()
		if t.Failed() && h.serveLog != nil {
			t.Logf("corral agent (%s) log:\n%s", h.dataDir, h.serveLog.String())
		}
	})
	h.startAgent()
	return h
}

// startAgent starts the agent and waits until its local API answers.
func (h *harness) startAgent() {
	h.t.Helper()
	h.startDaemon("corral agent", h.serveArgs)
}

// newShell starts a shell session on the agent (through its own socket).
func (h *harness) newShell(name string) string {
	h.t.Helper()
	id := strings.TrimSpace(h.corral("new", "--shell", "--dir", h.proj, "--name", name))
	if id == "" {
		h.t.Fatal("corral new printed no id")
	}
	return id
}

// noListeningTCP checks that a process holds no listening TCP socket (IPv4
// or IPv6), from /proc/<pid>/fd and /proc/<pid>/net/tcp{,6}.
func noListeningTCP(t *testing.T, pid int, who string) {
	t.Helper()
	ports, err := proc.ListeningTCPPorts(pid)
	if err != nil {
		t.Fatalf("listening sockets of %s (pid %d): %v", who, pid, err)
	}
	if len(ports) > 0 {
		t.Errorf("%s (pid %d) listens on TCP ports %v; an agent must only dial out", who, pid, ports)
	}
}

// sameSessions compares the hub's view of a device's sessions with the
// agent's own, field by field (the hub adds only the device's name).
func sameSessions(hubList []api.Session, device string, local []api.Session) (bool, string) {
	var mine []api.Session
	for _, s := range hubList {
		if s.Device == device {
			s.Device = ""
			mine = append(mine, s)
		}
	}
	norm := func(l []api.Session) string {
		l = slices.Clone(l)
		sort.Slice(l, func(i, j int) bool { return l[i].ID < l[j].ID })
		b, _ := json.MarshalIndent(l, "", " ")
		return string(b)
	}
	a, b := norm(mine), norm(local)
	return a == b, fmt.Sprintf("through the hub (device %s):\n%s\nthe agent's own corral ls --json:\n%s", device, a, b)
}

// waitSame waits until the hub's `ls --json` and the agent's local one
// agree about the agent's sessions.
func waitSame(t *testing.T, u *hubUser, h *harness, device string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		hubList := u.lsJSON(t, h)
		local := h.ls()
		ok, diff := sameSessions(hubList, device, local)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hub's and the agent's states differ after %v:\n%s", timeout, diff)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ---------------------------------------------------------------------------
// Browsers: the terminal and events WebSockets (docs/web-protocol.md).

func dialWS(ctx context.Context, hp *hubProc, token, path string) (*websocket.Conn, *http.Response, error) {
	hdr := http.Header{}
	if token != "" {
		hdr.Set("Authorization", "Bearer "+token)
	}
	c, resp, err := websocket.Dial(ctx, "ws://"+hp.addr+path, &websocket.DialOptions{HTTPHeader: hdr})
	if c != nil {
		c.SetReadLimit(64 << 20)
	}
	return c, resp, err
}

// Web terminal frame types.
const (
	termOutput = 0x01
	termHello  = 0x02
	termReset  = 0x03
	termExit   = 0x05
	termInput  = 0x11
)

type termFrame struct {
	typ  byte
	off  uint64
	data []byte
}

func readTermFrame(ctx context.Context, c *websocket.Conn) (termFrame, error) {
	typ, b, err := c.Read(ctx)
	if err != nil {
		return termFrame{}, err
	}
	if typ != websocket.MessageBinary || len(b) == 0 {
		return termFrame{}, fmt.Errorf("terminal: a %v frame of %d bytes", typ, len(b))
	}
	f := termFrame{typ: b[0], data: b[1:]}
	if f.typ == termOutput {
		if len(b) < 9 {
			return termFrame{}, fmt.Errorf("terminal: output frame of %d bytes", len(b))
		}
		f.off = binary.BigEndian.Uint64(b[1:9])
		f.data = b[9:]
	}
	return f, nil
}

// termReader reads a terminal WebSocket and checks the offsets: every
// output frame must start exactly where the one before ended.
type termReader struct {
	t      *testing.T
	c      *websocket.Conn
	stream string
	next   uint64 // the offset the next frame must have
	out    []byte // all output, in order
	frames int
}

// openTerm opens a session's terminal through the hub; query adds
// stream=S&offset=N to resume. It checks the hello (and, when resuming,
// that the same stream continues without a reset).
func openTerm(t *testing.T, hp *hubProc, token, id, query string, resume *termReader) *termReader {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, resp, err := dialWS(ctx, hp, token, "/api/v1/sessions/"+id+"/terminal?cols=120&rows=40"+query)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("terminal WebSocket of %s: %v (HTTP %d)", id, err, status)
	}
	tr := &termReader{t: t, c: c}
	if resume != nil {
		tr.next, tr.out, tr.frames = resume.next, resume.out, resume.frames
	}
	f, err := readTermFrame(ctx, c)
	if err != nil || f.typ != termHello {
		t.Fatalf("terminal: first frame %#x %q, %v; want hello", f.typ, f.data, err)
	}
	tr.stream = string(f.data)
	if resume != nil && tr.stream != resume.stream {
		t.Fatalf("resuming stream %s gave stream %s: output was lost", resume.stream, tr.stream)
	}
	return tr
}

// read reads frames until cond holds for the output so far (nil: until the
// connection ends) and returns the error that ended the reading, if any.
func (tr *termReader) read(timeout time.Duration, cond func(out []byte) bool) error {
	tr.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for cond == nil || !cond(tr.out) {
		f, err := readTermFrame(ctx, tr.c)
		if err != nil {
			return err
		}
		switch f.typ {
		case termOutput:
			if tr.frames == 0 && tr.next == 0 {
				tr.next = f.off
			}
			if f.off != tr.next {
				tr.t.Fatalf("terminal frame %d at offset %d, want %d (a %s)", tr.frames, f.off, tr.next,
					map[bool]string{true: "gap: bytes lost", false: "overlap: bytes repeated"}[f.off > tr.next])
			}
			tr.out = append(tr.out, f.data...)
			tr.next += uint64(len(f.data))
			tr.frames++
		case termReset:
			tr.t.Fatalf("terminal reset after %d bytes: the stream started over", len(tr.out))
		case termExit:
			return fmt.Errorf("terminal exit: %s", f.data)
		}
	}
	return nil
}

func (tr *termReader) send(text string) {
	tr.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.c.Write(ctx, websocket.MessageBinary, append([]byte{termInput}, text...)); err != nil {
		tr.t.Fatalf("terminal input: %v", err)
	}
}

// plainText strips a terminal byte stream down to its text: tmux's REP
// (repeat the previous character) is expanded, other escape sequences
// dropped.
var (
	repRe = regexp.MustCompile(`([^\x1b])\x1b\[(\d*)b`)
	oscRe = regexp.MustCompile(`\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)`)
	csiRe = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]`)
	escRe = regexp.MustCompile(`\x1b[()*+][0-9A-Za-z]|\x1b[@-Z\\-_=>78]`)
)

func plainText(b []byte) string {
	s := oscRe.ReplaceAllString(expandREP(b), "")
	s = csiRe.ReplaceAllString(s, "")
	return escRe.ReplaceAllString(s, "")
}

func expandREP(b []byte) string {
	return repRe.ReplaceAllStringFunc(string(b), func(m string) string {
		sub := repRe.FindStringSubmatch(m)
		n, err := strconv.Atoi(sub[2])
		if err != nil || n < 1 {
			n = 1
		}
		return strings.Repeat(sub[1], n+1)
	})
}

var counterRe = regexp.MustCompile(`n-(\d+)(\r\n|\x1b\[K)?`)

// counted returns the numbers of the counter's lines as the shell printed
// them, in order, and how many times tmux repainted one.
//
// tmux writes a line the shell prints as it comes ("n-7\r\n"), and
// repaints the whole screen now and then: at attach, and (tmux 3.3) a
// second after it when the terminal has not answered its device-attributes
// query, as this test's terminal never does. A repainted line ends with
// erase-to-end-of-line ("n-7\x1b[K\r\n"): it shows again what is on the
// screen, and is not output the shell printed again.
// repaintedLines are the counter's numbers tmux repainted.
func repaintedLines(out []byte) []int {
	var ns []int
	for _, m := range counterRe.FindAllStringSubmatch(expandREP(out), -1) {
		if m[2] == "\x1b[K" {
			n, _ := strconv.Atoi(m[1])
			ns = append(ns, n)
		}
	}
	return ns
}

func counted(out []byte) (printed []int, repainted int) {
	for _, m := range counterRe.FindAllStringSubmatch(expandREP(out), -1) {
		if m[2] == "\x1b[K" {
			repainted++
			continue
		}
		n, _ := strconv.Atoi(m[1])
		printed = append(printed, n)
	}
	return printed, repainted
}

var doneLineRe = regexp.MustCompile(`(?m)^DONE\r?$`)

// eventLog collects a user's events, raw, from the events WebSocket and
// from the NDJSON stream.
type eventLog struct {
	mu     sync.Mutex
	frames []string
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func watchEvents(t *testing.T, u *hubUser) *eventLog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	el := &eventLog{cancel: cancel}
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	c, _, err := dialWS(dctx, u.hp, u.token, "/api/v1/ws/events")
	if err != nil {
		cancel()
		t.Fatalf("events WebSocket of %s: %v", u.name, err)
	}
	el.wg.Add(2)
	go func() {
		defer el.wg.Done()
		defer c.CloseNow()
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			el.add("ws " + string(b))
		}
	}()
	go func() {
		defer el.wg.Done()
		u.c.StreamEvents(ctx, 0, func(ev api.Event) error {
			b, _ := json.Marshal(ev)
			el.add("ndjson " + string(b))
			return nil
		})
	}()
	t.Cleanup(el.stop)
	return el
}

func (el *eventLog) add(s string) {
	el.mu.Lock()
	el.frames = append(el.frames, s)
	el.mu.Unlock()
}

func (el *eventLog) stop() {
	el.cancel()
	el.wg.Wait()
}

func (el *eventLog) all() []string {
	el.mu.Lock()
	defer el.mu.Unlock()
	return slices.Clone(el.frames)
}

// waitBoth waits until both streams carried a frame containing every one
// of substrs.
func (el *eventLog) waitBoth(t *testing.T, timeout time.Duration, substrs ...string) {
	t.Helper()
	waitFor(t, timeout, fmt.Sprintf("%q on the events WebSocket and the NDJSON stream", substrs), func() bool {
		ws, nd := false, false
		for _, f := range el.all() {
			all := true
			for _, s := range substrs {
				all = all && strings.Contains(f, s)
			}
			if all {
				ws = ws || strings.HasPrefix(f, "ws ")
				nd = nd || strings.HasPrefix(f, "ndjson ")
			}
		}
		return ws && nd
	})
}

// ---------------------------------------------------------------------------
// Reconnecting.

// The agent's reconnect backoff (internal/agentlink/dial.go): from 0.5 s
// doubling to 30 s, ±20 % jitter.
const (
	linkMinBackoff = 500 * time.Millisecond
	linkMaxBackoff = 30 * time.Second
	linkJitter     = 0.2
)

// reconnectBound is the longest an agent can take to dial a hub that comes
// back `down` after the link dropped. Its attempts come at sums of jittered
// waits w_i in [0.8, 1.2]·b_i (b_i = 0.5 s·2^i, at most 30 s; a refused dial
// on loopback fails at once). The hub is reached by the first attempt after
// `down`; the one before it, attempt m, failed before `down`, which is
// possible only while the soonest it can come, 0.8·Σ_{i<m} b_i, is before
// `down`; and the next attempt follows it within 1.2·b_m.
func reconnectBound(down time.Duration) time.Duration {
	b := func(i int) time.Duration {
		if i >= 10 {
			return linkMaxBackoff
		}
		return min(linkMinBackoff<<i, linkMaxBackoff)
	}
	var sum time.Duration // Σ_{i<m} b_i
	m := 0
	for m < 100 {
		next := sum + b(m)
		if time.Duration(float64(next)*(1-linkJitter)) >= down {
			break
		}
		sum = next
		m++
	}
	return time.Duration(float64(b(m)) * (1 + linkJitter))
}

// TestCounted: the counter's lines as tmux sends them, from a run where
// tmux repainted the screen right after the first line.
func TestCounted(t *testing.T) {
	out := []byte("\x1b[1;37Hfor i in $(seq 1 400); do echo n-$i; sleep 0.05; done; echo DONE\r\n\x1b[?2004ln-1\r\n" +
		"\x1b(B\x1b[m\x1b[1;1H\x1b[1;40r\x1b[Hroot@vm:/tmp# for i in $(seq 1 400); do echo n-$i; sleep 0.05; done; echo DONE\x1b[K\r\nn-1\x1b[K\r\n\x1b[K\r\n" +
		"n-2\r\nn-1\x1b[2b\r\n\n\x1b[An-112\r\n\x1b[K\n\x1b[ADONE\r\n")
	printed, repainted := counted(out)
	if !slices.Equal(printed, []int{1, 2, 111, 112}) || repainted != 1 {
		t.Errorf("counted: %v, %d repainted", printed, repainted)
	}
	if !doneLineRe.MatchString(plainText(out)) {
		t.Errorf("no DONE line in %q", plainText(out))
	}
}

func TestReconnectBound(t *testing.T) {
	for _, c := range []struct {
		down, want time.Duration
	}{
		{0, 600 * time.Millisecond},
		{10 * time.Second, 9600 * time.Millisecond},          // attempts at ≥6.0 s may fail; the next within 1.2·8 s
		{12500 * time.Millisecond, 19200 * time.Millisecond}, // the 5th attempt (≥12.4 s) may fail too
		{10 * time.Minute, 36 * time.Second},
	} {
		if got := reconnectBound(c.down); got != c.want {
			t.Errorf("reconnectBound(%v) = %v, want %v", c.down, got, c.want)
		}
	}
}

// TestHubReconnect: one hub, two machines with real Claude sessions. Both
// machines' sessions show through the hub, exactly as each agent shows
// them itself. Then the hub is killed (SIGKILL) for 10 s, while a turn
// finishes on one machine and a shell prints a counter into a terminal
// that a browser watches through the hub. The hub comes back on the same
// port and data directory: the agents reconnect within their backoff, the
// states match again (the finished turn shows as review), and the
// terminal resumes from the browser's offset with no byte lost or
// repeated. The agents never listen on TCP.
func TestHubReconnect(t *testing.T) {
	t.Parallel()
	hp := newHubProc(t, restartablePort(t))
	alice := hp.addUser(t, "alice")
	gate := fakeapi.NewGate()
	defer gate.Release()
	m1 := newAgent(t, hp.url, hp.addDevice(t, "m1", "alice"), agentOptions{claude: true, fake: fakeapi.Options{Rules: []fakeapi.Rule{
		{Name: "held", Contains: "HELD turn", Reply: fakeapi.Stalled(gate, fakeapi.Text("Held turn done."))},
	}}})
	m2 := newAgent(t, hp.url, hp.addDevice(t, "m2", "alice"), agentOptions{claude: true})
	alice.waitOnline(t, "m1", 15*time.Second)
	alice.waitOnline(t, "m2", 15*time.Second)

	// The agents only dial out; the hub is what listens (the check's own
	// check).
	if ports, err := proc.ListeningTCPPorts(hp.pid()); err != nil || len(ports) == 0 {
		t.Fatalf("the hub's listening ports: %v %v", ports, err)
	}
	noListeningTCP(t, m1.serve.Process.Pid, "corral agent m1")
	noListeningTCP(t, m2.serve.Process.Pid, "corral agent m2")

	// Claude on both machines, started at once.
	c1 := strings.TrimSpace(m1.corral("new", "--dir", m1.proj, "--name", "c1"))
	c2 := strings.TrimSpace(m2.corral("new", "--dir", m2.proj, "--name", "c2"))
	m1.waitStatus(c1, api.StatusIdle, 60*time.Second)
	m2.waitStatus(c2, api.StatusIdle, 60*time.Second)
	// A shell on m1, started through the hub, at the size the browser's
	// terminal will have: attaching then does not resize the window, which
	// would make tmux redraw the screen (and repeat the counter's lines).
	code, body := alice.request(t, "POST", "/api/v1/sessions", api.CreateRequest{Device: "m1", Dir: m1.proj, Shell: true, Name: "counter", Cols: 120, Rows: 40})
	var shell api.Session
	if err := json.Unmarshal(body, &shell); err != nil || code != http.StatusCreated || shell.Device != "m1" {
		t.Fatalf("a shell on m1 through the hub: %d %s", code, body)
	}
	sh := shell.ID

	// Both machines' sessions appear, and say where they run.
	waitFor(t, 15*time.Second, "all three sessions through the hub", func() bool {
		got := map[string]string{}
		for _, s := range alice.sessions(t) {
			got[s.ID] = s.Device
		}
		return len(got) == 3 && got[c1] == "m1" && got[c2] == "m2" && got[sh] == "m1"
	})

	// A finished turn on m2 (review, unseen), a held turn on m1 (busy).
	m2.send(c2, "say hello")
	m2.waitStatus(c2, api.StatusReview, 30*time.Second)
	m1.send(c1, "HELD turn")
	m1.waitStatus(c1, api.StatusBusy, 15*time.Second)
	m1.api.AwaitPrompt(t, "HELD turn", 15*time.Second)
	alice.waitSession(t, 10*time.Second, "c1 busy", func(s api.Session) bool {
		return s.ID == c1 && s.Status == api.StatusBusy
	})
	waitSame(t, alice, m1, "m1", 10*time.Second)
	waitSame(t, alice, m2, "m2", 10*time.Second)

	// A browser watches the shell through the hub; a slow counter runs.
	term := openTerm(t, hp, alice.token, sh, "", nil)
	term.send("for i in $(seq 1 400); do echo n-$i; sleep 0.05; done; echo DONE\r")
	if err := term.read(20*time.Second, func(out []byte) bool { ns, _ := counted(out); return len(ns) > 0 && ns[len(ns)-1] >= 20 }); err != nil {
		t.Fatalf("terminal before the outage: %v; output %q", err, plainText(term.out))
	}

	// The hub dies.
	killed := time.Now()
	hp.stop(syscall.SIGKILL)
	// The browser's connection ends; what arrived until then counts.
	if err := term.read(10*time.Second, nil); err == nil {
		t.Fatal("the terminal WebSocket outlived the hub")
	}
	seenBefore, _ := counted(term.out)
	t.Logf("terminal: %d bytes, %d frames, up to n-%d before the hub died; resuming stream %s at offset %d",
		len(term.out), term.frames, seenBefore[len(seenBefore)-1], term.stream, term.next)

	// While it is away, the held turn finishes: the agent carries on alone.
	gate.Release()
	m1.waitStatus(c1, api.StatusReview, 30*time.Second)
	noListeningTCP(t, m1.serve.Process.Pid, "corral agent m1 (hub away)")

	// Ten seconds of outage, then the same hub again.
	time.Sleep(time.Until(killed.Add(10 * time.Second)))
	hp.start()
	restarted := time.Now()
	down := restarted.Sub(killed)
	// The restarted hub knows the sessions from its database at once,
	// before the agents are back (offline until they are).
	if l, err := alice.sessionsErr(); err != nil || len(l) != 3 {
		t.Errorf("the restarted hub's list before the agents reconnect: %s %v", summary(l), err)
	}

	bound := reconnectBound(down) + 3*time.Second // + handshake and sync, on a loaded machine
	back := map[string]time.Duration{}
	deadline := restarted.Add(bound)
	for len(back) < 2 {
		l, err := alice.sessionsErr()
		if err == nil {
			for _, dev := range []string{"m1", "m2"} {
				if _, ok := back[dev]; ok {
					continue
				}
				online := 0
				for _, s := range l {
					if s.Device == dev && !s.Offline {
						online++
					}
				}
				if (dev == "m1" && online == 2) || (dev == "m2" && online == 1) {
					back[dev] = time.Since(restarted)
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v down the agents must be back within %v of the restart (backoff %v-%v ±%.0f%%); back: %v; sessions %s\nm1 log:\n%s",
				down.Round(time.Millisecond), bound, linkMinBackoff, linkMaxBackoff, 100*linkJitter, back, summary(l), m1.serveLog.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("hub down %v; agents back and synced %v (m1) and %v (m2) after the restart; bound %v",
		down.Round(time.Millisecond), back["m1"].Round(time.Millisecond), back["m2"].Round(time.Millisecond), bound)
	t.Logf("m1's retries: %s", strings.Join(retries(m1.serveLog.String()), ", "))

	// The terminal resumes from the next byte the browser needs.
	term2 := openTerm(t, hp, alice.token, sh, fmt.Sprintf("&stream=%s&offset=%d", url.QueryEscape(term.stream), term.next), term)
	resumedAt := term.next
	if err := term2.read(60*time.Second, func(out []byte) bool { return doneLineRe.MatchString(plainText(out)) }); err != nil {
		t.Fatalf("terminal after the outage: %v; output %q", err, plainText(term2.out))
	}
	term2.c.Close(websocket.StatusNormalClosure, "")
	ns, repainted := counted(term2.out)
	// Every line is on the viewer's screen once, in order: printed, or, when
	// tmux happened to repaint the screen as the line came, only in that
	// repaint (the stream's offsets are contiguous either way). No printed
	// line comes twice or out of order.
	shown := map[int]bool{}
	for _, n := range ns {
		shown[n] = true
	}
	for _, n := range repaintedLines(term2.out) {
		shown[n] = true
	}
	ordered := slices.IsSorted(ns) && len(slices.Compact(slices.Clone(ns))) == len(ns)
	missing := []int{}
	for i := 1; i <= 400; i++ {
		if !shown[i] {
			missing = append(missing, i)
		}
	}
	if !ordered || len(missing) > 0 || len(shown) != 400 {
		t.Errorf("the counter's lines through the outage are not n-1..n-400 once each, in order: printed %d lines %v, missing %v\nraw output (first 2000 bytes): %q",
			len(ns), ns, missing, term2.out[:min(2000, len(term2.out))])
	}
	t.Logf("terminal: resumed at offset %d, %d bytes in %d frames in all, every offset contiguous; %d counter lines printed, %d repainted by tmux",
		resumedAt, len(term2.out), term2.frames, len(ns), repainted)

	// The states match again, and the turn that finished during the outage
	// shows as review.
	waitSame(t, alice, m1, "m1", 10*time.Second)
	waitSame(t, alice, m2, "m2", 10*time.Second)
	for _, s := range alice.lsJSON(t, m1) {
		switch s.ID {
		case c1, c2:
			if s.Status != api.StatusReview || s.Offline {
				t.Errorf("%s after the outage: %s offline=%v, want review", s.Name, s.Status, s.Offline)
			}
		}
		if s.ID == c1 && s.LastMessage != "Held turn done." {
			t.Errorf("c1's last message %q", s.LastMessage)
		}
	}
	noListeningTCP(t, m1.serve.Process.Pid, "corral agent m1 (after reconnecting)")
	noListeningTCP(t, m2.serve.Process.Pid, "corral agent m2 (after reconnecting)")

	// The metrics saw it: the agent redialled and streamed the terminal,
	// the hub counts every machine's sessions by its name.
	agentM := scrapeMetrics(t, m1.dataDir)
	if n, _ := metricSum(agentM, "corral_link_reconnects_total"); n < 1 {
		t.Errorf("m1's link reconnects: %v, want at least 1", n)
	}
	if n, _ := metricSum(agentM, "corral_terminal_bytes_total"); n < 400 {
		t.Errorf("m1's terminal bytes: %v, want the counter's output", n)
	}
	hubM := scrapeMetrics(t, hp.dataDir)
	if n, _ := metricSum(hubM, `corral_sessions{machine="m1",status="review"}`); n != 1 {
		t.Errorf("the hub's review sessions on m1: %v, want 1 (c1)", n)
	}
	if n, _ := metricSum(hubM, `corral_sessions{machine="m2",`); n != 1 {
		t.Errorf("the hub's sessions on m2: %v, want 1", n)
	}
	if n, _ := metricSum(hubM, "corral_link_connects_total"); n < 2 {
		t.Errorf("the hub's link connects since its restart: %v, want both agents", n)
	}
	// A hub's dashboard serves them only with --web-metrics: its users
	// would read each other's machines.
	if code, body := rawRequest(t, hp, alice.token, "GET", "/metrics", nil); code != http.StatusNotFound {
		t.Errorf("/metrics on the hub's dashboard without --web-metrics: %d %s", code, body)
	}
}

var retryRe = regexp.MustCompile(`hub link down; retrying.* in=(\S+)`)

// retries lists the waits an agent logged between its reconnect attempts.
func retries(log string) []string {
	var out []string
	for _, m := range retryRe.FindAllStringSubmatch(log, -1) {
		out = append(out, m[1])
	}
	return out
}

// ---------------------------------------------------------------------------
// Device keys and enrolment tokens.

// TestHubDeviceTokens: a device link without a key, or with a key the hub
// does not know and no good enrolment token (wrong, spent, of a revoked
// device, or a user's token), is refused with 401 before the WebSocket
// upgrade, logged with the address, and changes nothing; a real agent that
// is not enrolled never shows up. An enrolled agent needs no token to come
// back. Revoking a connected device cuts it off within the hub's 5 s
// re-check, its sessions leave its owner's list, and it cannot come back.
func TestHubDeviceTokens(t *testing.T) {
	t.Parallel()
	hp := newHubProc(t, "127.0.0.1:0")
	alice := hp.addUser(t, "alice")
	bob := hp.addUser(t, "bob")
	tokA2 := hp.addDevice(t, "a2", "alice")
	tokOld := hp.addDevice(t, "old", "alice")
	hp.admin(t, "device", "revoke", "old", "--user", "alice")
	a1 := newAgent(t, hp.url, hp.addDevice(t, "a1", "alice"), agentOptions{})
	a2 := newAgent(t, hp.url, tokA2, agentOptions{})
	s1 := a1.newShell("one")
	s2 := a2.newShell("two")
	waitFor(t, 15*time.Second, "both shells through the hub", func() bool { return len(alice.sessions(t)) == 2 })

	// Each machine made a key of its own (0600), which the hub now lists.
	for _, a := range []*harness{a1, a2} {
		fi, err := os.Stat(filepath.Join(a.dataDir, datadir.DeviceKey))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("the agent's key: %v, mode %v", err, fi)
		}
	}
	for _, d := range alice.devices(t) {
		if !strings.HasPrefix(d.Key, "SHA256:") {
			t.Errorf("device %s lists no key: %+v", d.Name, d)
		}
	}
	// The token stays with the agent: its sessions (Claude, and what
	// Claude runs) do not see it in their environment.
	if out := a1.corral("run", s1, "--", "env"); strings.Contains(out, "CORRAL_DEVICE_TOKEN") || !strings.Contains(out, "CORRAL_SESSION") {
		t.Errorf("a session's environment:\n%s", out)
	}
	// The token was spent at enrolment: the agent said so, and an agent
	// restarted without it comes back by its key alone.
	if !strings.Contains(a1.serveLog.String(), "enrolled with the hub") {
		t.Errorf("the agent did not say it enrolled")
	}
	a1.stopServe(syscall.SIGTERM)
	a1.env = slices.DeleteFunc(a1.env, func(kv string) bool { return strings.HasPrefix(kv, "CORRAL_DEVICE_TOKEN=") })
	a1.startAgent()
	alice.waitOnline(t, "a1", 15*time.Second)

	devicesBefore := hp.allDevices(t)
	sessionsBefore := summary(alice.sessions(t))
	refusedBefore := hp.refusals()
	linkURL := "ws://" + hp.addr + "/api/v1/link?v=" + strconv.Itoa(link.Protocol)
	stranger, _ := devicekey.Generate()
	keyHdr := func(tok string) http.Header {
		h := http.Header{link.HeaderDeviceKey: {stranger.PublicString()}}
		if tok != "" {
			h.Set("Authorization", "Bearer "+tok)
		}
		return h
	}
	cases := []struct {
		name string
		hdr  http.Header
	}{
		{"no key and no token", http.Header{}},
		{"an enrolment token without a key", http.Header{"Authorization": {"Bearer " + tokA2}}},
		{"basic auth", http.Header{"Authorization": {"Basic YWxpY2U6cGFzc3dvcmQ="}}},
		{"a malformed key", http.Header{link.HeaderDeviceKey: {"AAAA"}}},
		{"an unknown key", keyHdr("")},
		{"an unknown key and an empty token", keyHdr(" ")},
		{"an unknown key and a wrong token", keyHdr("ce_" + strings.Repeat("A", 43))},
		{"an unknown key and a spent token", keyHdr(tokA2)},
		{"an unknown key and a revoked device's token", keyHdr(tokOld)},
		{"an unknown key and a token cut short", keyHdr(tokOld[:len(tokOld)-1])},
		{"an unknown key and a user's API token", keyHdr(alice.token)},
	}
	for _, c := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		conn, resp, err := websocket.Dial(ctx, linkURL, &websocket.DialOptions{HTTPHeader: c.hdr})
		cancel()
		if err == nil {
			conn.CloseNow()
			t.Errorf("%s: the link was upgraded", c.name)
			continue
		}
		if resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %v, response %+v; want 401 before the upgrade", c.name, err, resp)
		}
	}
	waitFor(t, 5*time.Second, "every refusal in the hub's log", func() bool { return hp.refusals() >= refusedBefore+len(cases) })
	for _, l := range []string{logRefusedNoKey, logRefusedToken, logRefusedKey} {
		if hp.countLog(l) == 0 {
			t.Errorf("the hub's log has no %s", l)
		}
	}
	for _, line := range strings.Split(hp.log(), "\n") {
		if strings.Contains(line, "refused") && strings.Contains(line, "level=WARN") && !strings.Contains(line, "from=127.0.0.1:") {
			t.Errorf("a refusal logged without the peer's address: %s", line)
		}
	}

	// A real agent with a wrong token: refused, and it never shows up.
	refusedBefore = hp.refusals()
	stray := newAgent(t, hp.url, "ce_"+strings.Repeat("B", 43), agentOptions{})
	stray.newShell("stray")
	waitFor(t, 15*time.Second, "the stray agent to be refused", func() bool {
		return strings.Contains(stray.serveLog.String(), logAgentRefused) && hp.refusals() > refusedBefore
	})
	noListeningTCP(t, stray.serve.Process.Pid, "corral agent with a wrong token")

	// Nothing changed: no device appeared or was touched, no session moved.
	if after := hp.allDevices(t); after != devicesBefore {
		t.Errorf("refused links changed the devices:\nbefore %s\nafter  %s", devicesBefore, after)
	}
	if after := summary(alice.sessions(t)); after != sessionsBefore {
		t.Errorf("refused links changed alice's sessions: %s -> %s", sessionsBefore, after)
	}
	if l := bob.sessions(t); len(l) != 0 {
		t.Errorf("bob has sessions: %s", summary(l))
	}
	if got := len(alice.devices(t)); got != 2 {
		t.Errorf("alice has %d devices, want 2 (a1, a2): %+v", got, alice.devices(t))
	}

	// Revoking a2 while it is connected cuts it off.
	events := watchEvents(t, alice)
	refusedBefore = hp.refusals()
	revoked := time.Now()
	hp.admin(t, "device", "revoke", "a2", "--user", "alice")
	waitFor(t, 10*time.Second, "a2's session to leave alice's list", func() bool {
		for _, s := range alice.sessions(t) {
			if s.ID == s2 {
				return false
			}
		}
		return true
	})
	// The command asked the running hub, which cut the link at once (it
	// used to notice within its 5 s poll of the database).
	took := time.Since(revoked)
	t.Logf("a revoked device's sessions left its owner's list %v after the revoke started", took.Round(time.Millisecond))
	if took > 2*time.Second {
		t.Errorf("a revoked device's sessions left its owner's list only %v after the revoke started, want the link cut at once", took.Round(time.Millisecond))
	}
	events.waitBoth(t, 5*time.Second, `"type":"removed"`, `"id":"`+s2+`"`)
	for _, d := range alice.devices(t) {
		if d.Name == "a2" {
			t.Errorf("the revoked device is still listed: %+v", d)
		}
	}
	// It tries again, and is refused; its session does not come back. The
	// machine itself goes on: its session runs.
	waitFor(t, 15*time.Second, "the revoked device's reconnect to be refused", func() bool {
		return hp.refusals() > refusedBefore && strings.Contains(a2.serveLog.String(), logAgentRefused)
	})
	for _, s := range alice.sessions(t) {
		if s.ID == s2 {
			t.Errorf("the revoked device's session came back: %+v", s)
		}
	}
	if s := a2.lsOne(s2); s.Status == "" {
		t.Errorf("the revoked machine lost its session: %+v", s)
	}
	// The other device is untouched.
	if l := alice.sessions(t); len(l) != 1 || l[0].ID != s1 || l[0].Offline {
		t.Errorf("alice's sessions after revoking a2: %s", summary(l))
	}
}

// ---------------------------------------------------------------------------
// Owners.

// TestHubOwnerIsolation: two users whose machines even have the same name.
// Each user's token lists only their own sessions; every per-session route
// with the other user's session id answers 404 and does nothing to it; a
// user's event streams (WebSocket and NDJSON) never carry the other's
// sessions.
func TestHubOwnerIsolation(t *testing.T) {
	t.Parallel()
	hp := newHubProc(t, "127.0.0.1:0")
	alice := hp.addUser(t, "alice")
	bob := hp.addUser(t, "bob")
	am := newAgent(t, hp.url, hp.addDevice(t, "box", "alice"), agentOptions{args: []string{"--allow-run"}})
	bm := newAgent(t, hp.url, hp.addDevice(t, "box", "bob"), agentOptions{args: []string{"--allow-run"}})
	aliceEvents := watchEvents(t, alice)
	bobEvents := watchEvents(t, bob)

	sa := am.newShell("alices")
	sb := bm.newShell("bobs")
	alice.waitSession(t, 15*time.Second, "alice's shell", func(s api.Session) bool { return s.ID == sa })
	bob.waitSession(t, 15*time.Second, "bob's shell", func(s api.Session) bool { return s.ID == sb })
	// Bob starts a second session through the hub.
	code, body := bob.request(t, "POST", "/api/v1/sessions", api.CreateRequest{Dir: bm.proj, Shell: true, Name: "bobs-second"})
	if code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("bob's create through the hub: %d %s", code, body)
	}
	var sb2 api.Session
	json.Unmarshal(body, &sb2)
	bob.waitSession(t, 15*time.Second, "bob's second shell", func(s api.Session) bool { return s.ID == sb2.ID })

	if got := ids(alice.sessions(t)); !slices.Equal(got, []string{sa}) {
		t.Errorf("alice's list: %v, want only %s", got, sa)
	}
	if got, want := ids(bob.sessions(t)), ids([]api.Session{{ID: sb}, {ID: sb2.ID}}); !slices.Equal(got, want) {
		t.Errorf("bob's list: %v, want %v", got, want)
	}
	if l := alice.lsJSON(t, am); len(l) != 1 || l[0].ID != sa {
		t.Errorf("alice's corral --hub ls --json: %s", summary(l))
	}

	// Everything alice might try on bob's session.
	marker := filepath.Join(bm.proj, "pwned-by-run")
	dl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a download for bob's session reached the file server: %s", r.URL)
		io.WriteString(w, "pwned")
	}))
	defer dl.Close()
	before, err := bm.c.Capture(t.Context(), sb, 0)
	if err != nil {
		t.Fatal(err)
	}
	routes := []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/v1/sessions/" + sb, nil},
		{"PATCH", "/api/v1/sessions/" + sb, api.RenameRequest{Name: "pwned"}},
		{"POST", "/api/v1/sessions/" + sb + "/input", api.InputRequest{Text: "echo PWNED-input", Enter: true}},
		{"POST", "/api/v1/sessions/" + sb + "/keys", api.KeysRequest{Keys: []string{"e", "c", "h", "o", "Space", "P", "W", "N", "D", "Enter"}}},
		{"GET", "/api/v1/sessions/" + sb + "/screen", nil},
		{"POST", "/api/v1/sessions/" + sb + "/run", api.RunRequest{Argv: []string{"touch", marker}}},
		{"POST", "/api/v1/sessions/" + sb + "/viewed", nil},
		{"GET", "/api/v1/sessions/" + sb + "/timeline", nil},
		{"POST", "/api/v1/sessions/" + sb + "/download", api.DownloadRequest{URL: dl.URL + "/x", Path: "pwned.txt"}},
		{"DELETE", "/api/v1/sessions/" + sb, nil},
		{"DELETE", "/api/v1/sessions/" + sb2.ID, nil},
	}
	for _, r := range routes {
		code, body := alice.request(t, r.method, r.path, r.body)
		var e api.Error
		json.Unmarshal(body, &e)
		if code != http.StatusNotFound || e.Code != api.CodeNotFound {
			t.Errorf("alice: %s %s = %d %s, want 404 not_found", r.method, r.path, code, body)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	// The WebSocket is accepted before the terminal is looked up (nothing
	// is spawned for a refused upgrade), so "no such session" is its close
	// code, 4404, before any frame.
	c, _, err := dialWS(ctx, hp, alice.token, "/api/v1/sessions/"+sb+"/terminal?cols=80&rows=24")
	if err != nil {
		t.Errorf("alice: bob's terminal: %v, want an accepted WebSocket closed with 4404", err)
	} else {
		typ, b, rerr := c.Read(ctx)
		if st := websocket.CloseStatus(rerr); st != 4404 {
			t.Errorf("alice: bob's terminal: a %v frame %q, %v; want close 4404", typ, b, rerr)
		}
		c.CloseNow()
	}
	cancel()
	// Bob's machine is alice's "box" only by name: her listing of its
	// directory is her own machine's answer (outside her roots).
	if code, body := alice.request(t, "GET", "/api/v1/dirs?device=box&path="+url.QueryEscape(bm.proj), nil); code != http.StatusForbidden {
		t.Errorf("alice listing bob's directory: %d %s, want 403 from her own machine", code, body)
	}

	// Nothing happened to bob's sessions.
	for _, s := range bob.sessions(t) {
		if s.ID == sb && (s.Name != "bobs" || s.Offline) {
			t.Errorf("bob's session changed: %+v", s)
		}
	}
	if got := ids(bob.sessions(t)); len(got) != 2 {
		t.Errorf("bob's sessions after alice's attempts: %v", got)
	}
	after, err := bm.c.Capture(t.Context(), sb, 0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(after.Text, "PWN") || after.Text != before.Text {
		t.Errorf("bob's screen changed:\nbefore %q\nafter  %q", before.Text, after.Text)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("alice's run reached bob's session")
	}
	if _, err := os.Stat(filepath.Join(bm.proj, "pwned.txt")); err == nil {
		t.Error("alice's download reached bob's session")
	}
	// Bob's session works for bob.
	code, body = bob.request(t, "POST", "/api/v1/sessions/"+sb+"/run", api.RunRequest{Argv: []string{"echo", "alive"}})
	if code != http.StatusOK || !strings.Contains(string(body), "alive") {
		t.Errorf("bob's run: %d %s", code, body)
	}

	// Bob's changes stream to bob, never to alice.
	bob.request(t, "PATCH", "/api/v1/sessions/"+sb2.ID, api.RenameRequest{Name: "bobs-renamed"})
	bob.request(t, "DELETE", "/api/v1/sessions/"+sb2.ID, nil)
	bobEvents.waitBoth(t, 10*time.Second, "bobs-renamed")
	bobEvents.waitBoth(t, 10*time.Second, `"type":"removed"`, `"id":"`+sb2.ID+`"`)
	// Then a change of alice's own: whatever of bob's might have leaked to
	// her streams came before it.
	alice.request(t, "PATCH", "/api/v1/sessions/"+sa, api.RenameRequest{Name: "alices-sentinel"})
	aliceEvents.waitBoth(t, 10*time.Second, "alices-sentinel")
	frames := aliceEvents.all()
	for _, f := range frames {
		for _, secret := range []string{sb, sb2.ID, bm.proj, "bobs"} {
			if strings.Contains(f, secret) {
				t.Errorf("alice's event stream carried bob's %q: %.300s", secret, f)
			}
		}
	}
	t.Logf("alice's streams carried %d frames, none of bob's", len(frames))
}

// ---------------------------------------------------------------------------
// Hostile devices.

// evilLink is a device that speaks the link by hand.
type evilLink struct {
	t         *testing.T
	c         *websocket.Conn
	dev       *evilDevice
	host      string
	challenge link.Msg
}

// evilDevice is a device the test plays by hand: enrolled like any other,
// with a key of its own.
type evilDevice struct {
	key   *devicekey.Key
	token string
}

func newEvilDevice(t *testing.T, hp *hubProc, name, user string) *evilDevice {
	t.Helper()
	k, err := devicekey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return &evilDevice{key: k, token: hp.addDevice(t, name, user)}
}

// dialEvil connects as d and reads the hub's challenge.
func dialEvil(t *testing.T, hp *hubProc, d *evilDevice) *evilLink {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+hp.addr+"/api/v1/link?v="+strconv.Itoa(link.Protocol),
		&websocket.DialOptions{HTTPHeader: agentlink.Header(d.key, d.token)})
	if err != nil {
		t.Fatalf("evil link: %v", err)
	}
	t.Cleanup(func() { c.CloseNow() })
	e := &evilLink{t: t, c: c, dev: d, host: hp.addr}
	m, err := e.next(10 * time.Second)
	if err != nil || m["t"] != link.TypeChallenge {
		t.Fatalf("evil link: %v %v, want the challenge", m, err)
	}
	e.challenge = link.Msg{T: link.TypeChallenge, Nonce: fmt.Sprint(m["nonce"]), HubID: fmt.Sprint(m["hub_id"])}
	return e
}

func (e *evilLink) send(kind websocket.MessageType, b []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return e.c.Write(ctx, kind, b)
}

func (e *evilLink) sendJSON(v any) {
	e.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.send(websocket.MessageText, b); err != nil {
		e.t.Fatalf("evil link: send %s: %v", b, err)
	}
}

// next reads the next control message that is not a heartbeat.
func (e *evilLink) next(timeout time.Duration) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		typ, b, err := e.c.Read(ctx)
		if err != nil {
			return nil, err
		}
		if typ != websocket.MessageText {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		if m["t"] == "ping" || m["t"] == "pong" {
			continue
		}
		return m, nil
	}
}

// handshake answers the challenge with a hello signed by the device's key.
func (e *evilLink) handshake() {
	e.t.Helper()
	hello, err := agentlink.Answer(e.dev.key, e.host, link.Msg{T: link.TypeHello, Protocol: link.Protocol, Hostname: "evil", OS: "linux",
		Arch: "amd64", Version: "evil"})(e.challenge)
	if err != nil {
		e.t.Fatal(err)
	}
	b, err := link.EncodeMsg(hello)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.send(websocket.MessageText, b); err != nil {
		e.t.Fatal(err)
	}
	m, err := e.next(10 * time.Second)
	if err != nil || m["t"] != "welcome" {
		e.t.Fatalf("evil link: %v %v, want welcome", m, err)
	}
}

// closedWith waits until the hub closes the link and returns the status.
func (e *evilLink) closedWith(timeout time.Duration) websocket.StatusCode {
	e.t.Helper()
	for {
		_, err := e.next(timeout)
		if err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

func fakeSession(id, name string) api.Session {
	now := time.Now().UTC()
	return api.Session{ID: id, Name: name, Dir: "/evil", Kind: api.KindShell, Status: api.StatusIdle, CreatedAt: now, UpdatedAt: now}
}

// TestHubHostileLink: a device that sends junk over a well-authenticated
// link. Unknown types are answered bad_request (with an id) or ignored; it
// gets no service from the hub; it cannot take over or unlist another
// owner's session by naming its id; malformed JSON closes its link with
// 1007, a frame over 1 MiB with 1009; and the hub serves the other devices
// and users all along.
func TestHubHostileLink(t *testing.T) {
	t.Parallel()
	hp := newHubProc(t, "127.0.0.1:0")
	alice := hp.addUser(t, "alice")
	bob := hp.addUser(t, "bob")
	mallory := hp.addUser(t, "mallory")
	am := newAgent(t, hp.url, hp.addDevice(t, "a1", "alice"), agentOptions{args: []string{"--allow-run"}})
	bm := newAgent(t, hp.url, hp.addDevice(t, "b1", "bob"), agentOptions{args: []string{"--allow-run"}})
	evil := newEvilDevice(t, hp, "evil", "mallory")
	sa := am.newShell("alices")
	sb := bm.newShell("bobs")
	alice.waitSession(t, 15*time.Second, "alice's shell", func(s api.Session) bool { return s.ID == sa })
	bob.waitSession(t, 15*time.Second, "bob's shell", func(s api.Session) bool { return s.ID == sb })

	// Another protocol version: 400, before the upgrade.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	_, resp, err := websocket.Dial(ctx, "ws://"+hp.addr+"/api/v1/link?v=3", &websocket.DialOptions{HTTPHeader: agentlink.Header(evil.key, evil.token)})
	cancel()
	if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("link v=3: %v %+v, want 400", err, resp)
	}
	// A first answer that is not hello: 1002.
	e := dialEvil(t, hp, evil)
	e.sendJSON(map[string]any{"t": "sync", "seq": 1, "sessions": []api.Session{fakeSession("evil0", "early")}})
	if code := e.closedWith(10 * time.Second); code != websocket.StatusProtocolError {
		t.Errorf("sync before hello: closed with %v, want 1002", code)
	}
	// Malformed JSON after the handshake: 1007.
	e = dialEvil(t, hp, evil)
	e.handshake()
	if err := e.send(websocket.MessageText, []byte(`{"t":"event","seq":`)); err != nil {
		t.Fatal(err)
	}
	if code := e.closedWith(10 * time.Second); code != websocket.StatusInvalidFramePayloadData {
		t.Errorf("malformed JSON: closed with %v, want 1007", code)
	}

	e = dialEvil(t, hp, evil)
	e.handshake()
	// An unknown type with an id: bad_request. Without one: ignored.
	e.sendJSON(map[string]any{"t": "frobnicate", "id": 7})
	m, err := e.next(10 * time.Second)
	if err != nil || m["t"] != "res" || m["id"] != float64(7) || m["ok"] != false || !strings.Contains(fmt.Sprint(m["error"]), "bad_request") {
		t.Errorf("unknown type with an id: %v %v, want res bad_request", m, err)
	}
	e.sendJSON(map[string]any{"t": "frobnicate", "payload": strings.Repeat("x", 1000)})
	// A device asks the hub for service, with another owner's session: the
	// hub serves no requests to devices.
	for i, op := range []string{"kill", "capture", "nuke"} {
		id := 100 + i
		e.sendJSON(map[string]any{"t": "req", "id": id, "op": op, "args": map[string]string{"id": sb}})
		m, err := e.next(10 * time.Second)
		if err != nil || m["t"] != "res" || m["id"] != float64(id) || m["ok"] != false || !strings.Contains(fmt.Sprint(m["error"]), "bad_request") {
			t.Errorf("a device's %s request: %v %v, want res bad_request", op, m, err)
		}
	}
	// Binary frames of an unknown type, and output for a stream never opened.
	e.send(websocket.MessageBinary, []byte{0x7f, 0, 0, 0, 1, 'x'})
	e.send(websocket.MessageBinary, append([]byte{0x01, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0}, "junk"...))
	// The link still works: its own session shows.
	e.sendJSON(map[string]any{"t": "sync", "seq": 1, "sessions": []api.Session{fakeSession("evil1", "mine")}})
	mallory.waitSession(t, 10*time.Second, "the evil device's own session", func(s api.Session) bool { return s.ID == "evil1" })

	// It names bob's session as its own, changes it, and says it is gone.
	claim := fakeSession(sb, "hijacked")
	e.sendJSON(map[string]any{"t": "sync", "seq": 2, "sessions": []api.Session{fakeSession("evil1", "mine"), claim}})
	e.sendJSON(map[string]any{"t": "event", "seq": 3, "event": api.Event{Seq: 3, Type: api.EventSession, Session: &claim, Prev: api.StatusIdle}})
	e.sendJSON(map[string]any{"t": "event", "seq": 4, "event": api.Event{Seq: 4, Type: api.EventRemoved, ID: sb}})
	e.sendJSON(map[string]any{"t": "sync", "seq": 5, "sessions": []api.Session{fakeSession("evil1", "mine-2")}})
	mallory.waitSession(t, 10*time.Second, "the evil device's last sync", func(s api.Session) bool { return s.Name == "mine-2" })
	// Bob's session is still bob's, and reaches bob's machine.
	if code, body := bob.request(t, "GET", "/api/v1/sessions/"+sb+"/screen", nil); code != http.StatusOK {
		t.Errorf("bob's screen after the evil device named his session: %d %s", code, body)
	}
	if code, body := bob.request(t, "GET", "/api/v1/sessions/"+sb, nil); code != http.StatusOK || !strings.Contains(string(body), `"bobs"`) {
		t.Errorf("bob's session after the evil device named it: %d %s", code, body)
	}
	for _, s := range mallory.sessions(t) {
		if s.ID == sb && (s.Dir == bm.proj || s.Name == "bobs") {
			t.Errorf("mallory sees bob's session: %+v", s)
		}
	}

	// A frame over 1 MiB: 1009, and only that link goes.
	big := make([]byte, 1<<20+1)
	big[0] = 0x01
	go e.send(websocket.MessageBinary, big)
	if code := e.closedWith(15 * time.Second); code != websocket.StatusMessageTooBig {
		t.Errorf("a %d-byte frame: closed with %v, want 1009", len(big), code)
	}
	waitFor(t, 10*time.Second, "the evil device offline", func() bool {
		for _, d := range mallory.devices(t) {
			if d.Name == "evil" {
				return !d.Online
			}
		}
		return false
	})
	// The hub goes on serving the others: lists, and requests that go
	// through their links.
	for _, c := range []struct {
		u  *hubUser
		id string
	}{{alice, sa}, {bob, sb}} {
		if code, body := c.u.request(t, "GET", "/api/v1/sessions/"+c.id+"/screen", nil); code != http.StatusOK {
			t.Errorf("%s's screen after the evil link closed: %d %s", c.u.name, code, body)
		}
		if code, body := c.u.request(t, "POST", "/api/v1/sessions/"+c.id+"/run", api.RunRequest{Argv: []string{"echo", "still-here"}}); code != http.StatusOK || !strings.Contains(string(body), "still-here") {
			t.Errorf("%s's run after the evil link closed: %d %s", c.u.name, code, body)
		}
	}
	if l := alice.sessions(t); len(l) != 1 || l[0].ID != sa || l[0].Offline {
		t.Errorf("alice's sessions: %s", summary(l))
	}
	// And the evil device may connect again (its key is still enrolled).
	e = dialEvil(t, hp, evil)
	e.handshake()
}

// ---------------------------------------------------------------------------
// Hostile paths.

// tree lists every file and directory under dir, relative, sorted.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, rel)
		return nil
	})
	sort.Strings(out)
	return out
}

// TestHubHostilePaths: directory listings and downloads through the hub
// stay inside the agent's roots and the session's directory, and within the
// size limit; a refused download leaves nothing behind.
func TestHubHostilePaths(t *testing.T) {
	t.Parallel()
	hp := newHubProc(t, "127.0.0.1:0")
	alice := hp.addUser(t, "alice")
	am := newAgent(t, hp.url, hp.addDevice(t, "a1", "alice"), agentOptions{})
	outside := testio.TempDir(t, "corral-outside-")
	if err := os.Symlink(outside, filepath.Join(am.proj, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(am.proj, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(am.proj, "keep.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	sa := am.newShell("paths")
	alice.waitSession(t, 15*time.Second, "the shell", func(s api.Session) bool { return s.ID == sa })

	// Directory listings, with the agent's root being its project directory.
	code, body := alice.request(t, "GET", "/api/v1/dirs?device=a1&path="+url.QueryEscape(am.proj), nil)
	var l api.DirListing
	json.Unmarshal(body, &l)
	if code != http.StatusOK {
		t.Fatalf("listing the root: %d %s", code, body)
	}
	var names []string
	for _, e := range l.Entries {
		names = append(names, e.Name)
	}
	if !slices.Contains(names, "sub") || slices.Contains(names, "escape") {
		t.Errorf("the root's entries %v: want sub, and not the symlink that leaves the roots", names)
	}
	for _, p := range []string{
		am.proj + "/..",
		am.proj + "/sub/../..",
		am.proj + "/../" + filepath.Base(outside),
		am.proj + "/escape",
		am.proj + "/escape/",
		outside,
		"/etc",
		"/",
	} {
		code, body := alice.request(t, "GET", "/api/v1/dirs?device=a1&path="+url.QueryEscape(p), nil)
		if code != http.StatusForbidden {
			t.Errorf("listing %s through the hub: %d %.200s, want 403", p, code, body)
		}
	}
	if code, _ := alice.request(t, "GET", "/api/v1/dirs?device=a1&path=sub", nil); code != http.StatusBadRequest {
		t.Errorf("a relative path: %d, want 400", code)
	}

	// Downloads into the session's directory.
	var mu sync.Mutex
	hits := map[string]int{}
	const mib = 1 << 20
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/small":
			io.WriteString(w, "small file")
		case "/big": // announces its size
			w.Header().Set("Content-Length", strconv.Itoa(2*mib))
			w.Write(make([]byte, 2*mib))
		case "/liar": // announces nothing, sends 2 MiB
			fl := w.(http.Flusher)
			for i := 0; i < 32; i++ {
				if _, err := w.Write(make([]byte, 64<<10)); err != nil {
					return
				}
				fl.Flush()
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer files.Close()
	hit := func(p string) int {
		mu.Lock()
		defer mu.Unlock()
		return hits[p]
	}
	download := func(req api.DownloadRequest) (int, api.Error) {
		code, body := alice.request(t, "POST", "/api/v1/sessions/"+sa+"/download", req)
		var e api.Error
		json.Unmarshal(body, &e)
		if e.Code == "" && code >= 300 {
			e.Message = string(body)
		}
		return code, e
	}

	// It works at all.
	if code, e := download(api.DownloadRequest{URL: files.URL + "/small", Path: "got/small.txt"}); code != http.StatusCreated {
		t.Fatalf("a plain download: %d %+v", code, e)
	}
	if b, err := os.ReadFile(filepath.Join(am.proj, "got", "small.txt")); err != nil || string(b) != "small file" {
		t.Fatalf("the downloaded file: %q %v", b, err)
	}
	base := tree(t, am.proj)
	outsideBase := tree(t, outside)

	for _, c := range []struct {
		name      string
		req       api.DownloadRequest
		status    int
		code      string
		noTraffic bool
	}{
		{"over the size limit, announced", api.DownloadRequest{URL: files.URL + "/big", Path: "big.bin", MaxBytes: mib}, 413, api.CodeTooLarge, false},
		{"over the size limit, unannounced", api.DownloadRequest{URL: files.URL + "/liar", Path: "deep/er/liar.bin", MaxBytes: mib}, 413, api.CodeTooLarge, false},
		{"a path with ..", api.DownloadRequest{URL: files.URL + "/small", Path: "../escaped.txt"}, 403, api.CodeForbidden, true},
		{"a path with .. inside", api.DownloadRequest{URL: files.URL + "/small", Path: "sub/../../escaped.txt"}, 403, api.CodeForbidden, true},
		{"a path through a symlink out", api.DownloadRequest{URL: files.URL + "/small", Path: "escape/escaped.txt"}, 403, api.CodeForbidden, true},
		{"an absolute path", api.DownloadRequest{URL: files.URL + "/small", Path: filepath.Join(outside, "abs.txt")}, 400, api.CodeBadRequest, true},
		{"an existing file", api.DownloadRequest{URL: files.URL + "/small", Path: "keep.txt"}, 409, api.CodeConflict, true},
		{"not a URL it fetches", api.DownloadRequest{URL: "file:///etc/passwd", Path: "passwd"}, 400, api.CodeBadRequest, true},
	} {
		hitsBefore := hit("/small")
		code, e := download(c.req)
		if code != c.status || e.Code != c.code {
			t.Errorf("%s: %d %+v, want %d %s", c.name, code, e, c.status, c.code)
		}
		if c.noTraffic && hit("/small") != hitsBefore {
			t.Errorf("%s: the file was fetched before the path was refused", c.name)
		}
		if got := tree(t, am.proj); !slices.Equal(got, base) {
			t.Errorf("%s: the session's directory changed: %v -> %v", c.name, base, got)
		}
		if got := tree(t, outside); !slices.Equal(got, outsideBase) {
			t.Errorf("%s: a file landed outside: %v", c.name, got)
		}
		// Where a ".." path would land (the parent is the shared temp
		// directory, so only this name is looked at).
		if _, err := os.Lstat(filepath.Join(filepath.Dir(am.proj), "escaped.txt")); err == nil {
			t.Errorf("%s: a file landed above the session's directory", c.name)
		}
	}
	if hit("/big") != 1 || hit("/liar") != 1 {
		t.Errorf("the oversized files were asked for %d and %d times, want once each", hit("/big"), hit("/liar"))
	}
	if b, _ := os.ReadFile(filepath.Join(am.proj, "keep.txt")); string(b) != "mine" {
		t.Errorf("an existing file was overwritten: %q", b)
	}
}

// ---------------------------------------------------------------------------
// A hostile hub: the agent's end of the link.

// fakeHubLink is one connection a real agent made to a hub written here.
type fakeHubLink struct {
	t     *testing.T
	c     link.Conn
	hello link.Msg
	// sync is the agent's first sync after the hello.
	sync link.Msg
}

// next reads the agent's next control message that is not a heartbeat, an
// event or a sync.
func (f *fakeHubLink) next(timeout time.Duration) (link.Msg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		kind, b, err := f.c.Read(ctx)
		if err != nil {
			return link.Msg{}, err
		}
		if kind != link.Text {
			continue
		}
		m, err := link.DecodeMsg(b)
		if err != nil {
			return link.Msg{}, err
		}
		switch m.T {
		case link.TypePing, link.TypePong, link.TypeEvent, link.TypeSync:
			continue
		}
		return m, nil
	}
}

func (f *fakeHubLink) write(kind link.Kind, b []byte) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.c.Write(ctx, kind, b); err != nil {
		f.t.Fatalf("fake hub: write: %v", err)
	}
}

// call sends a request as raw JSON (any op, any args) and returns the
// agent's answer.
func (f *fakeHubLink) call(id uint64, op string, args any) link.Msg {
	f.t.Helper()
	m, err := link.NewReq(id, op, args)
	if err != nil {
		f.t.Fatal(err)
	}
	b, err := link.EncodeMsg(m)
	if err != nil {
		f.t.Fatal(err)
	}
	f.write(link.Text, b)
	res, err := f.next(30 * time.Second)
	if err != nil || res.T != link.TypeRes || res.ID != id {
		f.t.Fatalf("fake hub: answer to %s #%d: %+v %v", op, id, res, err)
	}
	return res
}

func resCode(m link.Msg) string {
	if m.Error == nil {
		return ""
	}
	return m.Error.Code
}

// fakeHub is a hub written here, on 127.0.0.1, that real agents dial:
// hostile, it does whatever a test says. It checks the agent's proof of its
// key all the same, so the test knows the agent's half is right.
type fakeHub struct {
	t     *testing.T
	url   string
	conns chan fakeConn
}

type fakeConn struct {
	c    link.Conn
	key  string // the key the agent named
	host string // the Host it dialed
}

// The token the fake hub wants with an unknown key, and its id.
const (
	fakeHubToken = "ce_fakehubtoken"
	fakeHubID    = "hfakehub"
)

func newFakeHub(t *testing.T) *fakeHub {
	t.Helper()
	fh := &fakeHub{t: t, conns: make(chan fakeConn, 8)}
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/link" || r.URL.Query().Get("v") != strconv.Itoa(link.Protocol) || r.Header.Get(link.HeaderDeviceKey) == "" ||
			r.Header.Get("Authorization") != "Bearer "+fakeHubToken {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		fh.conns <- fakeConn{c: link.NewWebSocket(c, 0), key: r.Header.Get(link.HeaderDeviceKey), host: r.Host}
		// The connection is the test's until it ends.
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(func() { close(stop); srv.Close() })
	fh.url = srv.URL
	return fh
}

// accept takes the agent's next connection: the handshake (the agent's
// signature checked), then its first sync.
func (fh *fakeHub) accept(what string) *fakeHubLink {
	t := fh.t
	t.Helper()
	var fc fakeConn
	select {
	case fc = <-fh.conns:
	case <-time.After(15 * time.Second):
		t.Fatalf("the agent did not dial the hub (%s)", what)
	}
	f := &fakeHubLink{t: t, c: fc.c}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nonce := devicekey.NewNonce()
	hello, err := link.ServerHello(ctx, fc.c, link.Msg{Nonce: base64.RawURLEncoding.EncodeToString(nonce), HubID: fakeHubID}, func(h link.Msg) (link.Msg, error) {
		pub, err := devicekey.ParsePublic(fc.key)
		sig, _ := base64.RawURLEncoding.DecodeString(h.Sig)
		if err != nil || !devicekey.Verify(pub, devicekey.Challenge{Host: fc.host, Hub: fakeHubID, Nonce: nonce}, sig) {
			t.Errorf("the agent's proof of its key does not verify (%s): %+v", what, h)
		}
		return link.Msg{DeviceID: "dfake", DeviceName: "fake", HubVersion: "fake", HeartbeatMS: 15000}, nil
	})
	if err != nil {
		t.Fatalf("handshake (%s): %v", what, err)
	}
	f.hello = hello
	// The agent's full state comes first, whenever it connects.
	for {
		kind, b, err := fc.c.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for the sync (%s): %v", what, err)
		}
		if m, err := link.DecodeMsg(b); kind == link.Text && err == nil && m.T == link.TypeSync {
			f.sync = m
			break
		}
	}
	return f
}

// TestAgentHostileHub: the agent's end of the device link against a hub
// that sends junk and hostile requests. The real `corral agent` dials a hub
// written here (127.0.0.1). Unknown types with an id and unknown ops are
// answered bad_request; paths out of its roots or out of a session's
// directory are refused; malformed JSON (1007) and a frame over 1 MiB
// (1009) close the link, and the agent dials again and syncs its full
// state.
func TestAgentHostileHub(t *testing.T) {
	t.Parallel()
	fh := newFakeHub(t)
	ag := newAgent(t, fh.url, fakeHubToken, agentOptions{})
	outside := testio.TempDir(t, "corral-outside-")
	if err := os.Symlink(outside, filepath.Join(ag.proj, "escape")); err != nil {
		t.Fatal(err)
	}
	sid := ag.newShell("target")
	var files sync.Map
	fileSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		files.Store(r.URL.Path, true)
		io.WriteString(w, "data")
	}))
	defer fileSrv.Close()
	accept := fh.accept
	f := accept("first")
	if f.hello.Protocol != link.Protocol {
		t.Errorf("hello %+v", f.hello)
	}
	// The shell may have been created before or after the first sync; a
	// later event says so. Either way the agent answers about it.
	if res := f.call(1, api.OpCapture.Name, api.CaptureRequest{SessionRef: api.SessionRef{ID: sid}}); res.Error != nil {
		t.Fatalf("capture of the agent's session: %+v", res.Error)
	}

	// Unknown types: answered bad_request with an id, ignored without.
	f.write(link.Text, []byte(`{"t":"frobnicate","id":2,"payload":[1,2,3]}`))
	if m, err := f.next(10 * time.Second); err != nil || m.T != link.TypeRes || m.ID != 2 || m.OK || resCode(m) != api.CodeBadRequest {
		t.Errorf("an unknown type with an id: %+v %v, want res bad_request", m, err)
	}
	f.write(link.Text, []byte(`{"t":"frobnicate"}`))
	for i, c := range []struct {
		op   string
		args any
		code string
	}{
		{"nuke", map[string]string{"id": sid}, api.CodeBadRequest},
		{api.OpKill.Name, api.SessionRef{ID: "nosuchsession"}, api.CodeNotFound},
		{api.OpKill.Name, api.SessionRef{ID: "../../etc"}, api.CodeNotFound},
		{api.OpDirs.Name, api.DirsRequest{Path: ag.proj + "/.."}, api.CodePolicyDenied},
		{api.OpDirs.Name, api.DirsRequest{Path: ag.proj + "/escape"}, api.CodePolicyDenied},
		{api.OpDirs.Name, api.DirsRequest{Path: "/"}, api.CodePolicyDenied},
		{api.OpDownload.Name, api.DownloadRequest{SessionRef: api.SessionRef{ID: sid}, URL: fileSrv.URL + "/a", Path: "../escaped.txt"}, api.CodeForbidden},
		{api.OpDownload.Name, api.DownloadRequest{SessionRef: api.SessionRef{ID: sid}, URL: fileSrv.URL + "/b", Path: "escape/escaped.txt"}, api.CodeForbidden},
		{api.OpDownload.Name, api.DownloadRequest{SessionRef: api.SessionRef{ID: sid}, URL: fileSrv.URL + "/c", Path: "/tmp/escaped.txt"}, api.CodeBadRequest},
		{api.OpTermOpen.Name, api.TermOpenRequest{Stream: 0, SessionRef: api.SessionRef{ID: sid}}, api.CodeBadRequest},
		{api.OpTermResize.Name, api.TermResizeRequest{Stream: 42, Cols: 10, Rows: 10}, api.CodeNotFound},
	} {
		res := f.call(uint64(10+i), c.op, c.args)
		if res.OK || resCode(res) != c.code {
			t.Errorf("%s %+v: %+v, want %s", c.op, c.args, res.Error, c.code)
		}
	}
	for _, p := range []string{"/a", "/b", "/c"} {
		if _, ok := files.Load(p); ok {
			t.Errorf("a refused download fetched %s", p)
		}
	}
	if got := tree(t, outside); len(got) != 0 {
		t.Errorf("files landed outside the session's directory: %v", got)
	}
	// Input for a stream never opened, an unknown frame type: ignored.
	f.write(link.Binary, link.EncodeFrame(link.InputFrame(7, []byte("echo PWNED\r"))))
	f.write(link.Binary, []byte{0x7e, 0, 0, 0, 1, 'x'})
	if res := f.call(40, api.OpCapture.Name, api.CaptureRequest{SessionRef: api.SessionRef{ID: sid}}); res.Error != nil {
		t.Fatalf("capture after the junk frames: %+v", res.Error)
	}

	// A frame over 1 MiB: the agent closes with 1009, dials again and
	// syncs.
	big := make([]byte, link.MaxFrame+1)
	big[0] = 0x11
	go f.c.Write(context.Background(), link.Binary, big)
	if _, err := f.next(15 * time.Second); link.CloseStatus(err) != link.StatusTooBig {
		t.Errorf("after a %d-byte frame: %v, want a close with 1009", len(big), err)
	}
	f = accept("after the oversized frame")
	if !slices.ContainsFunc(f.sync.Sessions, func(s api.Session) bool { return s.ID == sid }) {
		t.Errorf("the sync after reconnecting lacks the session: %+v", f.sync.Sessions)
	}
	// Malformed JSON: 1007, and again it comes back.
	f.write(link.Text, []byte(`{"t":"req","id":`))
	if _, err := f.next(15 * time.Second); link.CloseStatus(err) != link.StatusInvalidData {
		t.Errorf("after malformed JSON: %v, want a close with 1007", err)
	}
	f = accept("after malformed JSON")
	if res := f.call(50, api.OpCapture.Name, api.CaptureRequest{SessionRef: api.SessionRef{ID: sid}}); res.Error != nil {
		t.Errorf("capture after reconnecting: %+v", res.Error)
	}
	if out := ag.screen(sid); strings.Contains(out, "PWNED") {
		t.Errorf("input for an unopened stream reached the session: %q", out)
	}
	noListeningTCP(t, ag.serve.Process.Pid, "corral agent")
}

// TestAgentPolicy: a hostile hub asks the real agent for everything its
// owner did not allow, and is refused with policy_denied, a message that
// names the flag that would allow it, and no effect: no command runs, no
// session starts outside --root (a symlink out of it included), no file
// is fetched into a session outside it, no conversation of a folder
// outside it is read, no argument reaches claude. Typing into a session
// stays allowed. With the flags, the same requests pass the policy.
func TestAgentPolicy(t *testing.T) {
	t.Parallel()
	fh := newFakeHub(t)
	ag := newAgent(t, fh.url, fakeHubToken, agentOptions{})
	outside := testio.TempDir(t, "corral-outside-")
	if err := os.Symlink(outside, filepath.Join(ag.proj, "escape")); err != nil {
		t.Fatal(err)
	}
	// A session the machine's owner started outside the roots, by hand.
	local := strings.TrimSpace(ag.corral("new", "--shell", "--dir", outside, "--name", "local"))
	inside := ag.newShell("inside")
	marker := filepath.Join(outside, "ran")
	var files sync.Map
	fileSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		files.Store(r.URL.Path, true)
		io.WriteString(w, "data")
	}))
	defer fileSrv.Close()

	type ask struct {
		name string
		op   string
		args any
		flag string // the flag the refusal names
	}
	asks := []ask{
		{"run a command", api.OpRun.Name, api.RunRequest{SessionRef: api.SessionRef{ID: inside}, Argv: []string{"touch", marker}}, "--allow-run"},
		{"a session in /", api.OpCreate.Name, api.CreateRequest{Dir: "/", Shell: true}, "--root"},
		{"a session outside the roots", api.OpCreate.Name, api.CreateRequest{Dir: outside, Shell: true}, "--root"},
		{"a session through a symlink out", api.OpCreate.Name, api.CreateRequest{Dir: filepath.Join(ag.proj, "escape"), Shell: true}, "--root"},
		{"a session in ~", api.OpCreate.Name, api.CreateRequest{Dir: "~", Shell: true}, "--root"},
		{"claude arguments", api.OpCreate.Name, api.CreateRequest{Dir: ag.proj, Args: []string{"--model", "opus"}}, "--allow-claude-args"},
		{"--dangerously-skip-permissions", api.OpCreate.Name, api.CreateRequest{Dir: ag.proj, Args: []string{"--dangerously-skip-permissions"}}, "--allow-claude-args"},
		{"a download into a session outside the roots", api.OpDownload.Name, api.DownloadRequest{SessionRef: api.SessionRef{ID: local}, URL: fileSrv.URL + "/d", Path: "x.txt"}, "--root"},
		{"resumable prompts of /", api.OpResumable.Name, api.ResumableRequest{Dir: "/"}, "--root"},
		{"resumable prompts outside the roots", api.OpResumable.Name, api.ResumableRequest{Dir: outside}, "--root"},
		{"resumable prompts through a symlink out", api.OpResumable.Name, api.ResumableRequest{Dir: filepath.Join(ag.proj, "escape")}, "--root"},
		{"a listing of a folder that does not exist outside", api.OpDirs.Name, api.DirsRequest{Path: "/nonexistent/x"}, "--root"},
	}
	f := fh.accept("default policy")
	sessionsBefore := ag.ls()
	for i, a := range asks {
		res := f.call(uint64(100+i), a.op, a.args)
		if res.OK || resCode(res) != api.CodePolicyDenied {
			t.Errorf("%s: %+v, want policy_denied", a.name, res.Error)
			continue
		}
		if !strings.Contains(res.Error.Message, "corral agent "+a.flag) {
			t.Errorf("%s: %q does not name %s", a.name, res.Error.Message, a.flag)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("a refused run ran")
	}
	if _, ok := files.Load("/d"); ok {
		t.Errorf("a refused download fetched its URL")
	}
	if after := ag.ls(); len(after) != len(sessionsBefore) {
		t.Errorf("refused creates started sessions: %s -> %s", summary(sessionsBefore), summary(after))
	}
	if !strings.Contains(ag.serveLog.String(), "does not allow; refused") {
		t.Errorf("the agent did not log the refusals")
	}
	// What a person does in the dashboard stays allowed: typing, a
	// session inside the roots, a listing of them.
	if res := f.call(200, api.OpInput.Name, api.InputRequest{SessionRef: api.SessionRef{ID: inside}, Text: "echo TYPED-BY-HUB", Enter: true}); !res.OK {
		t.Errorf("input: %+v", res.Error)
	}
	waitFor(t, 10*time.Second, "the typed line in the pane", func() bool { return strings.Contains(ag.screen(inside), "TYPED-BY-HUB") })
	if res := f.call(201, api.OpCreate.Name, api.CreateRequest{Dir: ag.proj, Shell: true, Name: "fromhub"}); !res.OK {
		t.Errorf("a session inside the roots: %+v", res.Error)
	}
	if res := f.call(202, api.OpDirs.Name, api.DirsRequest{Path: ag.proj}); !res.OK {
		t.Errorf("a listing inside the roots: %+v", res.Error)
	}

	// The owner allows more: each request now passes the policy (a shell
	// takes no claude arguments, so the agent itself answers bad_request
	// for those).
	ag.stopServe(syscall.SIGTERM)
	ag.serveArgs = append(ag.serveArgs, "--allow-run", "--allow-claude-args", "--root", outside)
	ag.startAgent()
	f = fh.accept("with --allow-run --allow-claude-args --root")
	res := f.call(300, api.OpRun.Name, api.RunRequest{SessionRef: api.SessionRef{ID: inside}, Argv: []string{"touch", marker}})
	if !res.OK {
		t.Errorf("run with --allow-run: %+v", res.Error)
	} else if _, err := os.Stat(marker); err != nil {
		t.Errorf("run with --allow-run did not run: %v", err)
	}
	if res := f.call(301, api.OpCreate.Name, api.CreateRequest{Dir: ag.proj, Shell: true, Args: []string{"--model", "opus"}}); resCode(res) != api.CodeBadRequest {
		t.Errorf("claude arguments with --allow-claude-args: %+v, want the agent's bad_request", res.Error)
	}
	res = f.call(302, api.OpCreate.Name, api.CreateRequest{Dir: ag.proj, Shell: true, Args: []string{"--dangerously-skip-permissions"}})
	if resCode(res) != api.CodePolicyDenied || !strings.Contains(res.Error.Message, "--allow-dangerous-claude-args") {
		t.Errorf("--dangerously-skip-permissions with only --allow-claude-args: %+v, want policy_denied naming --allow-dangerous-claude-args", res.Error)
	}
	res = f.call(303, api.OpCreate.Name, api.CreateRequest{Dir: ag.proj, Shell: true, Args: []string{"--add-dir", "/"}})
	if resCode(res) != api.CodePolicyDenied {
		t.Errorf("--add-dir / with --allow-claude-args: %+v, want policy_denied", res.Error)
	}
	if res := f.call(304, api.OpDownload.Name, api.DownloadRequest{SessionRef: api.SessionRef{ID: local}, URL: fileSrv.URL + "/e", Path: "x.txt"}); !res.OK {
		t.Errorf("a download with --root %s: %+v", outside, res.Error)
	}
	if res := f.call(305, api.OpResumable.Name, api.ResumableRequest{Dir: outside}); !res.OK {
		t.Errorf("resumable with --root %s: %+v", outside, res.Error)
	}

	ag.stopServe(syscall.SIGTERM)
	ag.serveArgs = append(ag.serveArgs, "--allow-dangerous-claude-args")
	ag.startAgent()
	f = fh.accept("with --allow-dangerous-claude-args")
	if res := f.call(400, api.OpCreate.Name, api.CreateRequest{Dir: ag.proj, Shell: true, Args: []string{"--dangerously-skip-permissions"}}); resCode(res) != api.CodeBadRequest {
		t.Errorf("--dangerously-skip-permissions with --allow-dangerous-claude-args: %+v, want the agent's bad_request", res.Error)
	}
}

// TestHubImpostorDevice: a second machine with a copy of laptop's identity
// (its data directory's key) dials the hub while laptop is connected. The
// hub refuses it (4003) as long as laptop answers, logs it, and shows the
// owner "another machine is using laptop's identity"; laptop is never
// replaced, and what the owner types goes to laptop, never to the
// impostor. (Before device keys, a second connection with the same token
// silently replaced the real machine.)
func TestHubImpostorDevice(t *testing.T) {
	t.Parallel()
	hp := newHubProc(t, "127.0.0.1:0")
	alice := hp.addUser(t, "alice")
	laptop := newAgent(t, hp.url, hp.addDevice(t, "laptop", "alice"), agentOptions{})
	sid := laptop.newShell("work")
	alice.waitSession(t, 15*time.Second, "laptop's shell", func(s api.Session) bool { return s.ID == sid })

	// The impostor starts with laptop's key and no token at all.
	imp := newAgent(t, hp.url, "", agentOptions{key: filepath.Join(laptop.dataDir, datadir.DeviceKey)})
	imp.newShell("trap")
	waitFor(t, 30*time.Second, "the impostor to be refused as a conflict", func() bool {
		return strings.Contains(imp.serveLog.String(), "another machine is connected with this machine's identity")
	})
	if n := hp.countLog("another machine is using a device's identity"); n == 0 {
		t.Errorf("the hub did not log the conflict")
	}
	var dev api.Device
	for _, d := range alice.devices(t) {
		if d.Name == "laptop" {
			dev = d
		}
	}
	if !dev.Online || dev.Conflict == nil || dev.Conflict.Count < 1 || !strings.HasPrefix(dev.Conflict.Address, "127.0.0.1:") {
		t.Fatalf("laptop as its owner sees it: %+v (conflict %+v)", dev, dev.Conflict)
	}
	// Laptop was never replaced: its one connection is the one it made.
	if n := strings.Count(laptop.serveLog.String(), "connected to the hub"); n != 1 {
		t.Errorf("laptop connected %d times", n)
	}
	if strings.Contains(laptop.serveLog.String(), "replaced") {
		t.Errorf("laptop's link was replaced")
	}
	// What alice types goes to laptop's session; the impostor's list is
	// never the one the hub shows.
	if code, body := alice.request(t, "POST", "/api/v1/sessions/"+sid+"/input", map[string]any{"text": "echo FOR-LAPTOP-ONLY", "enter": true}); code != http.StatusOK && code != http.StatusNoContent {
		t.Fatalf("input: %d %s", code, body)
	}
	waitFor(t, 10*time.Second, "the input on laptop", func() bool { return strings.Contains(laptop.screen(sid), "FOR-LAPTOP-ONLY") })
	for _, s := range alice.sessions(t) {
		if s.Name == "trap" {
			t.Errorf("the impostor's session reached the hub: %+v", s)
		}
	}
	noListeningTCP(t, imp.serve.Process.Pid, "the impostor")

	// The dashboard's machine list says so.
	ctx := browser(t)
	within(t, ctx, 30*time.Second, "the conflict in alice's dashboard",
		chromedp.Navigate(hp.url),
		chromedp.WaitVisible(css(`[data-testid="login-with-token"]`)),
		chromedp.Click(css(`[data-testid="login-with-token"]`)),
		chromedp.SendKeys(css(`[data-testid="login-token"]`), alice.token),
		chromedp.Click(css(`[data-testid="login-submit"]`)),
		chromedp.WaitVisible(css(`[data-testid="device-conflict"][data-device="laptop"]`)),
	)
	line := get(t, ctx, 5*time.Second, "the conflict line", chromedp.Text(css(`[data-testid="device-conflict"][data-device="laptop"]`)))
	if !strings.Contains(line, "another machine is using laptop's identity") {
		t.Errorf("the dashboard says %q", line)
	}
}
