// Command tmuxclient measures what one attached client costs tmux during a
// flood, without corral in the way: the time of `cat` of a big file in a
// 120x40 pane (corral's tmux config) with no client; with a rendered client
// (`tmux attach` in a PTY) read as fast as possible, with a pause after
// each read, or not at all; with a client that is suspended during the
// flood (what corral's terminal streams do); and with a control-mode
// client (`tmux -C attach`, %output lines, unescaped). It is the
// experiment behind docs/benchmarks.md section 4; run it with
// bench/web/tmuxclient.sh.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"

	"github.com/corral-dev/corral/bench/internal/benchutil"
	"github.com/corral-dev/corral/internal/tmux"
)

var variantsFlag *string

// suspends counts the tty-suspend variants' suspensions.
var suspends = map[string]int{}

func main() {
	reps := flag.Int("reps", 9, "measured runs per variant")
	mib := flag.Int("mib", 50, "size of the file, MiB")
	outPath := flag.String("out", "", "also write the report to this file")
	variantsFlag = flag.String("variants", "none,tty,tty-pause-5ms,tty-stall,tty-suspend-16,control",
		"clients to compare: none, tty (rendered client read as fast as possible), tty-pause-DURATION (a pause after each read), "+
			"tty-stall (not read during the flood), tty-suspend-KIB (suspended once it got KIB KiB within 100 ms, woken 250 ms later), control (tmux -C)")
	flag.Parse()
	if err := run(*reps, *mib, *outPath); err != nil {
		fmt.Fprintln(os.Stderr, "tmuxclient:", err)
		os.Exit(1)
	}
}

func run(reps, mib int, outPath string) error {
	dir, err := os.MkdirTemp("", "tmuxclient-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	big := filepath.Join(dir, "big.txt")
	if err := writeText(big, mib<<20); err != nil {
		return err
	}
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte(tmux.Config()), 0o600); err != nil {
		return err
	}
	sock := filepath.Join(dir, "sock")
	t := func(args ...string) error {
		out, err := exec.Command("tmux", append([]string{"-S", sock, "-f", conf}, args...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := t("new-session", "-d", "-s", "s", "-x", "120", "-y", "40", "env", "PS1=$ ", "sh"); err != nil {
		return err
	}
	defer t("kill-server")

	variants := strings.Split(*variantsFlag, ",")
	res := map[string][]time.Duration{}
	cpu := map[string][]time.Duration{}
	out, err := exec.Command("tmux", "-S", sock, "display-message", "-p", "#{pid}").Output()
	if err != nil {
		return fmt.Errorf("tmux server pid: %w", err)
	}
	serverPID := strings.TrimSpace(string(out))
	for rep := -1; rep < reps; rep++ {
		for i := range variants {
			v := variants[(i+rep+3)%len(variants)]
			c0 := cpuTime(serverPID)
			d, err := once(t, sock, conf, big, v)
			if err != nil {
				return fmt.Errorf("%s: %w", v, err)
			}
			if rep >= 0 {
				res[v] = append(res[v], d)
				cpu[v] = append(cpu[v], cpuTime(serverPID)-c0)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# tmux client cost during a flood\n\n%s\n", benchutil.Machine())
	fmt.Fprintf(&b, "%d MiB cat in a 120x40 tmux pane (corral's tmux config), %d runs each after a warm-up, interleaved; "+
		"timed until the shell ran the command (tmux wait-for)\n\n", mib, reps)
	b.WriteString("| client | median ms | min | max | vs none (medians) | tmux server CPU ms (median) |\n|---|---:|---:|---:|---:|---:|\n")
	base := median(res["none"])
	for _, v := range variants {
		d := res[v]
		fmt.Fprintf(&b, "| %s | %.0f | %.0f | %.0f | %+.1f%% | %.0f |\n", v, ms(median(d)), ms(slices.Min(d)), ms(slices.Max(d)),
			100*(float64(median(d))/float64(base)-1), ms(median(cpu[v])))
	}
	if len(suspends) > 0 {
		fmt.Fprintf(&b, "\nSuspensions over all runs: %v\n", suspends)
	}
	return benchutil.WriteOutput(outPath, b.String())
}

// once runs one cat with the given client attached and times it until the
// shell has finished (tmux wait-for), the same end as "no viewer" in
// bench/web/throughput.
func once(t func(...string) error, sock, conf, big, variant string) (time.Duration, error) {
	var stop func()
	switch variant {
	case suspendVariant(variant):
		// A flood (over 256 KiB in 100 ms) suspends the client, so tmux stops
		// drawing for it; 250 ms later it is woken (SIGCONT makes the client
		// send MSG_WAKEUP) and redrawn whole.
		ptmx, tty, err := pty.Open()
		if err != nil {
			return 0, err
		}
		pty.Setsize(ptmx, &pty.Winsize{Cols: 120, Rows: 40})
		cmd := exec.Command("tmux", "-S", sock, "-f", conf, "attach", "-t", "s")
		cmd.Env = append(os.Environ(), "TERM=xterm-256color")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		tty.Close()
		name := tty.Name()
		limit, _ := strconv.Atoi(strings.TrimPrefix(variant, "tty-suspend-"))
		limit <<= 10
		done := make(chan struct{})
		go func() {
			buf := make([]byte, 64<<10)
			var winStart time.Time
			var winBytes int
			var wakeAt time.Time
			for {
				n, err := ptmx.Read(buf)
				if err != nil {
					break
				}
				now := time.Now()
				if now.Sub(winStart) > 100*time.Millisecond {
					winStart, winBytes = now, 0
				}
				winBytes += n
				if winBytes > limit && now.After(wakeAt) {
					suspends[variant]++
					t("suspend-client", "-t", name)
					wakeAt = time.Now().Add(250 * time.Millisecond)
					winBytes = 0
					go func(at time.Time) {
						time.Sleep(time.Until(at))
						cmd.Process.Signal(syscall.SIGCONT)
					}(wakeAt)
				}
			}
			close(done)
		}()
		stop = func() { t("detach-client", "-s", "s"); cmd.Wait(); ptmx.Close(); <-done }
	case "tty", "tty-stall":
		fallthrough
	case variantIsPause(variant):
		cmd := exec.Command("tmux", "-S", sock, "-f", conf, "attach", "-t", "s")
		cmd.Env = append(os.Environ(), "TERM=xterm-256color")
		f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 120, Rows: 40})
		if err != nil {
			return 0, err
		}
		done := make(chan struct{})
		gate := make(chan struct{})
		go func() {
			buf := make([]byte, 64<<10)
			for {
				if _, err := f.Read(buf); err != nil {
					break
				}
				if d, ok := pause(variant); ok {
					time.Sleep(d)
				} else if variant == "tty-stall" {
					<-gate
				}
			}
			close(done)
		}()
		stop = func() { close(gate); t("detach-client", "-s", "s"); cmd.Wait(); f.Close(); <-done }
	case "control":
		cmd := exec.Command("tmux", "-S", sock, "-f", conf, "-C", "attach", "-t", "s")
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		fmt.Fprintf(in, "refresh-client -C 120x40\n")
		done := make(chan struct{})
		go func() {
			// Unescape as a real viewer must: octal escapes in %output.
			r := bufio.NewReaderSize(out, 64<<10)
			var buf []byte
			for {
				line, err := r.ReadSlice('\n')
				if bytes.HasPrefix(line, []byte("%output ")) {
					buf = unescape(buf[:0], line)
				}
				if err != nil && err != bufio.ErrBufferFull {
					break
				}
			}
			close(done)
		}()
		stop = func() { in.Close(); cmd.Wait(); <-done }

	}
	if stop != nil {
		time.Sleep(300 * time.Millisecond) // the client's first redraw
	}
	t("send-keys", "-t", "s", "clear", "Enter")
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if err := t("send-keys", "-t", "s", "-l", "cat "+big+"; tmux -S "+sock+" wait-for -S done\n"); err != nil {
		return 0, err
	}
	if err := t("wait-for", "done"); err != nil {
		return 0, err
	}
	d := time.Since(start)
	if stop != nil {
		stop()
	}
	return d, nil
}

func pause(variant string) (time.Duration, bool) {
	s, ok := strings.CutPrefix(variant, "tty-pause-")
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	return d, err == nil
}

// suspendVariant matches tty-suspend-KIB: suspend once a client got KIB
// KiB within 100 ms.
func suspendVariant(v string) string {
	if k, ok := strings.CutPrefix(v, "tty-suspend-"); ok {
		if _, err := strconv.Atoi(k); err == nil {
			return v
		}
	}
	return "\x00never"
}

func variantIsPause(v string) string {
	if _, ok := pause(v); ok {
		return v
	}
	return "\x00never"
}

func unescape(dst, line []byte) []byte {
	// "%output %ID data"
	if i := bytes.IndexByte(line[8:], ' '); i >= 0 {
		line = line[8+i+1:]
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' && i+3 < len(line) {
			dst = append(dst, (line[i+1]-'0')<<6|(line[i+2]-'0')<<3|(line[i+3]-'0'))
			i += 3
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

func writeText(path string, size int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	r := rand.New(rand.NewPCG(1, 2))
	n := 0
	for n < size {
		l := 20 + r.IntN(100)
		line := make([]byte, l)
		for i := range line {
			line[i] = byte('a' + r.IntN(26))
		}
		line[l-1] = '\n'
		w.Write(line)
		n += l
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// cpuTime is a process's user+system time from /proc (10 ms ticks).
func cpuTime(pid string) time.Duration {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(u+st) * 10 * time.Millisecond
}

func median(d []time.Duration) time.Duration {
	f := make([]float64, len(d))
	for i, x := range d {
		f[i] = float64(x)
	}
	return time.Duration(benchutil.Median(f))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
