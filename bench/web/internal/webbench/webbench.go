// Package webbench holds what the web benchmarks (bench/web/latency,
// bench/web/throughput) share: the dashboard's login URL from a `corral
// serve` log, a sampler of a process's memory, and report helpers.
package webbench

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/corral-dev/corral/bench/internal/benchutil"
)

var openRE = regexp.MustCompile(`corral: open (http://\S+)`)

// WebURL waits (at most timeout) until the log of `corral serve` shows the
// dashboard's login URL ("corral: open http://127.0.0.1:P/?token=T", on
// stdout) and returns its base URL and the access token.
func WebURL(logPath string, timeout time.Duration) (base, token string, err error) {
	deadline := time.Now().Add(timeout)
	for {
		data, _ := os.ReadFile(logPath)
		if m := openRE.FindSubmatch(data); m != nil {
			u, err := url.Parse(string(m[1]))
			if err != nil {
				return "", "", err
			}
			token = u.Query().Get("token")
			u.RawQuery, u.Path = "", ""
			return u.String(), token, nil
		}
		if time.Now().After(deadline) {
			return "", "", fmt.Errorf("no login URL in %s after %v", logPath, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Mem is one memory sample of a process.
type Mem struct {
	At          time.Time
	RSS, HWM    int64 // bytes
	Threads     int
	Unavailable bool
}

// Sampler reads /proc/<pid>/status every interval.
type Sampler struct {
	pid      int
	interval time.Duration
	stop     chan struct{}
	done     chan struct{}

	mu      sync.Mutex
	samples []Mem
	marks   []Mark
}

// Mark labels a moment of the sampled series (a run starting or ending).
type Mark struct {
	At    time.Time
	Label string
}

// StartSampler starts sampling pid's memory every interval until Stop.
func StartSampler(pid int, interval time.Duration) *Sampler {
	s := &Sampler{pid: pid, interval: interval, stop: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	return s
}

func (s *Sampler) loop() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		m := ReadMem(s.pid)
		s.mu.Lock()
		s.samples = append(s.samples, m)
		s.mu.Unlock()
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

// Mark records a labelled moment.
func (s *Sampler) Mark(label string) {
	s.mu.Lock()
	s.marks = append(s.marks, Mark{time.Now(), label})
	s.mu.Unlock()
}

// Snapshot returns a copy of the samples so far.
func (s *Sampler) Snapshot() []Mem {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mem(nil), s.samples...)
}

// Stop ends sampling and returns the samples and marks.
func (s *Sampler) Stop() ([]Mem, []Mark) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples, s.marks
}

// ReadMem reads VmRSS, VmHWM and Threads of pid.
func ReadMem(pid int) Mem {
	m, err := benchutil.ReadMem(pid)
	return Mem{At: time.Now(), RSS: m.RSS, HWM: m.HWM, Threads: m.Threads, Unavailable: err != nil}
}

// MiB formats bytes as MiB.
func MiB(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) }

// Row formats a summary of milliseconds as a markdown table row's cells:
// n | median | p10 | p90 | min | max.
func Row(xs []float64) string {
	s := benchutil.Summarize(xs)
	return fmt.Sprintf("%d | **%s** | %s | %s | %s | %s", s.N, benchutil.Ms(s.Median), benchutil.Ms(s.P10),
		benchutil.Ms(s.P90), benchutil.Ms(s.Min), benchutil.Ms(s.Max))
}

// Busy lists the processes other than pids (and their children) that used
// the most CPU over window, as "name (x% of a CPU)": what else ran on the
// machine while the benchmark did.
func Busy(window time.Duration, n int) string {
	a := cpuTimes()
	time.Sleep(window)
	b := cpuTimes()
	type use struct {
		name string
		pct  float64
	}
	var us []use
	self := os.Getpid()
	for pid, t1 := range b {
		if pid == self {
			continue
		}
		t0, ok := a[pid]
		if !ok {
			continue
		}
		pct := float64(t1.ticks-t0.ticks) / 100 / window.Seconds() * 100
		if pct >= 1 {
			us = append(us, use{t1.name, pct})
		}
	}
	sort.Slice(us, func(i, j int) bool { return us[i].pct > us[j].pct })
	if len(us) > n {
		us = us[:n]
	}
	if len(us) == 0 {
		return "nothing above 1% of a CPU"
	}
	var parts []string
	for _, u := range us {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", u.name, u.pct))
	}
	return strings.Join(parts, ", ")
}

type cpuTime struct {
	name  string
	ticks int64
}

func cpuTimes() map[int]cpuTime {
	out := map[int]cpuTime{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if i < 0 || j < i {
			continue
		}
		f := strings.Fields(s[j+1:])
		if len(f) < 13 {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[pid] = cpuTime{s[i+1 : j], ut + st}
	}
	return out
}
