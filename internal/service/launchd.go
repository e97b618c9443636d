package service

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/corral-dev/corral/internal/atomicfile"
)

// LaunchdPlist returns a launchd agent's property list for a spec; logDir
// receives its stdout and stderr.
func LaunchdPlist(s Spec, logDir string) []byte {
	var b bytes.Buffer
	str := func(v string) string {
		var e bytes.Buffer
		xml.EscapeText(&e, []byte(v))
		return "<string>" + e.String() + "</string>"
	}
	w := func(line string) { b.WriteString(line + "\n") }
	w(`<?xml version="1.0" encoding="UTF-8"?>`)
	w(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">`)
	w(fmt.Sprintf("<!-- Written by corral %s ('corral service install %s'); 'corral service uninstall %s' removes it. -->",
		strings.ReplaceAll(s.Version, "--", "- -"), s.Kind, s.Kind))
	w(`<plist version="1.0">`)
	w(`<dict>`)
	w(`	<key>Label</key>`)
	w(`	` + str(s.Kind.Label()))
	w(`	<key>ProgramArguments</key>`)
	w(`	<array>`)
	for _, a := range append([]string{s.Exe, string(s.Kind)}, s.Args...) {
		w(`		` + str(a))
	}
	w(`	</array>`)
	if len(s.Env) > 0 {
		w(`	<key>EnvironmentVariables</key>`)
		w(`	<dict>`)
		for _, e := range s.Env {
			k, v, _ := strings.Cut(e, "=")
			w(`		<key>` + xmlText(k) + `</key>`)
			w(`		` + str(v))
		}
		w(`	</dict>`)
	}
	w(`	<key>RunAtLoad</key>`)
	w(`	<true/>`)
	w(`	<!-- Restart it when it fails, not after a clean stop. -->`)
	w(`	<key>KeepAlive</key>`)
	w(`	<dict>`)
	w(`		<key>SuccessfulExit</key>`)
	w(`		<false/>`)
	w(`	</dict>`)
	w(`	<key>ThrottleInterval</key>`)
	w(`	<integer>5</integer>`)
	w(`	<!-- The sessions' tmux server must outlive corral. -->`)
	w(`	<key>AbandonProcessGroup</key>`)
	w(`	<true/>`)
	w(`	<key>ProcessType</key>`)
	w(`	<string>Interactive</string>`)
	w(`	<key>StandardOutPath</key>`)
	w(`	` + str(filepath.Join(logDir, string(s.Kind)+".log")))
	w(`	<key>StandardErrorPath</key>`)
	w(`	` + str(filepath.Join(logDir, string(s.Kind)+".log")))
	w(`</dict>`)
	w(`</plist>`)
	return b.Bytes()
}

func xmlText(s string) string {
	var e bytes.Buffer
	xml.EscapeText(&e, []byte(s))
	return e.String()
}

// Launchd installs agents in the user's GUI domain with launchctl.
type Launchd struct {
	AgentDir string // ~/Library/LaunchAgents
	LogDir   string // ~/Library/Logs/corral
	UID      int
	Run      Runner
}

func (m Launchd) domain() string { return "gui/" + strconv.Itoa(m.UID) }

// Path is where a kind's plist goes.
func (m Launchd) Path(k Kind) string { return filepath.Join(m.AgentDir, k.Label()+".plist") }

// Install writes the plist and loads it (which starts it: RunAtLoad). A
// loaded one is unloaded first, so that the new flags take effect.
func (m Launchd) Install(ctx context.Context, s Spec, start bool) (string, error) {
	path := m.Path(s.Kind)
	for _, d := range []string{m.AgentDir, m.LogDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", err
		}
	}
	if err := atomicfile.Write(path, LaunchdPlist(s, m.LogDir), 0o644); err != nil {
		return "", err
	}
	m.Run(ctx, "launchctl", "bootout", m.domain()+"/"+s.Kind.Label()) // not loaded: fine
	if !start {
		return path, nil
	}
	if _, err := m.Run(ctx, "launchctl", "bootstrap", m.domain(), path); err != nil {
		return path, err
	}
	return path, nil
}

// Uninstall unloads the agent and removes its plist.
func (m Launchd) Uninstall(ctx context.Context, k Kind) (string, error) {
	path := m.Path(k)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return path, ErrNotInstalled
	}
	m.Run(ctx, "launchctl", "bootout", m.domain()+"/"+k.Label())
	return path, os.Remove(path)
}

// Status asks launchd about a kind's agent.
func (m Launchd) Status(ctx context.Context, k Kind) (State, error) {
	st := State{Kind: k, Manager: "launchd", Path: m.Path(k), Logs: filepath.Join(m.LogDir, string(k)+".log")}
	if _, err := os.Stat(st.Path); err == nil {
		st.Installed = true
	}
	out, err := m.Run(ctx, "launchctl", "print", m.domain()+"/"+k.Label())
	if err != nil {
		st.Active = "not loaded"
		return st, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), " = ")
		if !ok {
			continue
		}
		switch k {
		case "state":
			if st.Active == "" {
				st.Active = v // "running", "not running"
			}
		case "pid":
			if st.PID == 0 {
				st.PID, _ = strconv.Atoi(v)
			}
		}
	}
	return st, nil
}
