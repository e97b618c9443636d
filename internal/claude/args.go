package claude

import (
	"strings"
)

// Claude Code's command line, as `claude --help` (2.1.197) describes it,
// sorted by what an option lets a session do. corral's agent lets its hub
// pass extra arguments only when its owner allows it, and the dangerous
// ones only when its owner allows those too (internal/agentlink); the
// table is what tells them apart. The parser is commander.js: no
// abbreviations of long options, values attached with '=' or following,
// short options clustered (-cd), a variadic option (<dirs...>) takes every
// following argument up to the next option, and the first operand may name
// a subcommand.

// argValue is how many values an option takes.
type argValue int

const (
	valueNone     argValue = iota
	valueRequired          // <value>: the next argument, whatever it is
	valueOptional          // [value]: the next argument, unless it is an option
	valueVariadic          // <values...>: every next argument up to an option
)

// argSpec is one option: its values, and why it is dangerous ("" when it
// is not).
type argSpec struct {
	value  argValue
	danger string
}

const (
	dangerBypass   = "bypasses Claude's permission prompts"
	dangerHooks    = "turns off hooks, corral's too, so corral cannot see the session"
	dangerCode     = "loads code or commands of the hub's choosing"
	dangerOutside  = "acts outside the session, where corral cannot see it"
	dangerSettings = "changes which settings and permission rules apply"
)

// claudeArgs are Claude Code's options; both names of an option are keys.
var claudeArgs = map[string]argSpec{
	// Safe: what a person could also say or choose in the session.
	"--model":                  {valueRequired, ""},
	"--fallback-model":         {valueRequired, ""},
	"--effort":                 {valueRequired, ""},
	"-n":                       {valueRequired, ""},
	"--name":                   {valueRequired, ""},
	"--verbose":                {valueNone, ""},
	"-c":                       {valueNone, ""},
	"--continue":               {valueNone, ""},
	"--fork-session":           {valueNone, ""},
	"--append-system-prompt":   {valueRequired, ""},
	"--system-prompt":          {valueRequired, ""},
	"--disallowedTools":        {valueVariadic, ""},
	"--disallowed-tools":       {valueVariadic, ""},
	"--ax-screen-reader":       {valueNone, ""},
	"--brief":                  {valueNone, ""},
	"--disable-slash-commands": {valueNone, ""},
	"--no-chrome":              {valueNone, ""},
	"--exclude-dynamic-system-prompt-sections": {valueNone, ""},
	"--prompt-suggestions":                     {valueOptional, ""},
	"-d":                                       {valueOptional, ""},
	"--debug":                                  {valueOptional, ""},
	"--strict-mcp-config":                      {valueNone, ""},
	"-h":                                       {valueNone, ""},
	"--help":                                   {valueNone, ""},
	"-v":                                       {valueNone, ""},
	"--version":                                {valueNone, ""},
	// Only with --print, which is dangerous itself.
	"--betas":                    {valueVariadic, ""},
	"--json-schema":              {valueRequired, ""},
	"--max-budget-usd":           {valueRequired, ""},
	"--input-format":             {valueRequired, ""},
	"--output-format":            {valueRequired, ""},
	"--include-hook-events":      {valueNone, ""},
	"--include-partial-messages": {valueNone, ""},
	"--replay-user-messages":     {valueNone, ""},
	"--no-session-persistence":   {valueNone, ""},
	// Safe or not by their values (checkValue).
	"--add-dir":         {valueVariadic, ""},
	"--permission-mode": {valueRequired, ""},

	// Dangerous.
	"--dangerously-skip-permissions":       {valueNone, dangerBypass},
	"--allow-dangerously-skip-permissions": {valueNone, dangerBypass},
	"--allowedTools":                       {valueVariadic, "lets tools run without asking"},
	"--allowed-tools":                      {valueVariadic, "lets tools run without asking"},
	"--tools":                              {valueVariadic, "chooses the tools Claude has"},
	"--settings":                           {valueRequired, dangerSettings + ", and may add hooks (commands)"},
	"--setting-sources":                    {valueRequired, dangerSettings},
	"--mcp-config":                         {valueVariadic, "starts MCP servers (commands) of the hub's choosing"},
	"--agents":                             {valueRequired, "defines agents with tools and permissions of the hub's choosing"},
	"--agent":                              {valueRequired, "runs as an agent, with that agent's tools and permissions"},
	"--plugin-dir":                         {valueRequired, dangerCode},
	"--plugin-url":                         {valueRequired, dangerCode},
	"--debug-file":                         {valueRequired, "writes a file anywhere"},
	"--file":                               {valueVariadic, "downloads files into the session's folder"},
	"--bare":                               {valueNone, dangerHooks},
	"--safe-mode":                          {valueNone, dangerHooks},
	"-p":                                   {valueNone, "runs without a terminal and skips the folder trust dialog"},
	"--print":                              {valueNone, "runs without a terminal and skips the folder trust dialog"},
	"--bg":                                 {valueNone, dangerOutside},
	"--background":                         {valueNone, dangerOutside},
	"--remote-control":                     {valueOptional, "lets Remote Control drive the session"},
	"--remote-control-session-name-prefix": {valueRequired, "lets Remote Control drive the session"},
	"--chrome":                             {valueNone, "lets Claude drive a browser"},
	"--ide":                                {valueNone, "connects Claude to an IDE"},
	"--tmux":                               {valueNone, dangerOutside},
	"-w":                                   {valueOptional, dangerOutside},
	"--worktree":                           {valueOptional, dangerOutside},
	"--from-pr":                            {valueOptional, "resumes a conversation corral did not check"},
	"-r":                                   {valueOptional, "resumes a conversation corral did not check (use corral's resume)"},
	"--resume":                             {valueOptional, "resumes a conversation corral did not check (use corral's resume)"},
	"--session-id":                         {valueRequired, "picks the conversation's id"},
}

// claudeCommands are Claude Code's subcommands: a first operand that names
// one runs it instead of a session.
var claudeCommands = map[string]bool{
	"agents": true, "auth": true, "auto-mode": true, "doctor": true, "gateway": true, "install": true,
	"mcp": true, "plugin": true, "plugins": true, "project": true, "setup-token": true, "ultrareview": true,
	"update": true, "upgrade": true, "help": true,
}

// safePermissionModes are the modes that ask at least as much as the
// default does.
var safePermissionModes = map[string]bool{"default": true, "plan": true, "dontAsk": true}

// Danger is one argument that needs its owner's consent, and why.
type Danger struct {
	Arg    string
	Reason string
}

// DangerousArgs returns the arguments among args (extra arguments for a
// session's `claude`) that let the session do more than a person could
// through corral: bypass or widen Claude's permission prompts, load
// commands or code, act outside the session or out of corral's sight.
// An option corral does not know counts as dangerous, and so does an
// option after "--" (where it would be a prompt, but this is cheap to
// refuse). inside reports whether a directory given to --add-dir is one the
// agent serves (relative to the session's folder when not absolute); nil
// allows every directory.
func DangerousArgs(args []string, inside func(dir string) bool) []Danger {
	var out []Danger
	add := func(arg, reason string) { out = append(out, Danger{Arg: arg, Reason: reason}) }
	operands := 0
	operand := func(a string) {
		if operands == 0 && claudeCommands[a] {
			add(a, "runs `claude "+a+"` instead of a session")
		}
		operands++
	}
	dashdash := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case dashdash:
			if strings.HasPrefix(a, "-") && a != "-" {
				add(a, "an option after --")
			}
			operand(a)
			continue
		case a == "--":
			dashdash = true
			continue
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a, "=")
			spec, ok := claudeArgs[name]
			if !ok {
				add(a, "is not an option corral knows to be safe")
				continue
			}
			var vals []string
			if hasVal {
				vals = append(vals, val)
			}
			vals, i = takeValues(args, i, spec.value, vals, hasVal)
			if spec.danger != "" {
				add(name, spec.danger)
				continue
			}
			checkValues(name, vals, inside, add)
		case strings.HasPrefix(a, "-") && a != "-":
			// A cluster of short options; one that takes a value takes the
			// rest of the cluster, or what follows.
			for j := 1; j < len(a); j++ {
				name := "-" + a[j:j+1]
				spec, ok := claudeArgs[name]
				if !ok {
					add(name, "is not an option corral knows to be safe")
					break
				}
				if spec.value == valueNone {
					if spec.danger != "" {
						add(name, spec.danger)
					}
					continue
				}
				var vals []string
				rest := a[j+1:]
				if rest != "" {
					vals = append(vals, rest)
				}
				vals, i = takeValues(args, i, spec.value, vals, rest != "")
				if spec.danger != "" {
					add(name, spec.danger)
				} else {
					checkValues(name, vals, inside, add)
				}
				break
			}
		default:
			operand(a)
		}
	}
	return out
}

// takeValues consumes the values of the option at args[i] as commander
// does, given those attached to it, and returns them with the index of
// the last argument consumed.
func takeValues(args []string, i int, kind argValue, vals []string, attached bool) ([]string, int) {
	isOpt := func(s string) bool { return strings.HasPrefix(s, "-") && s != "-" }
	switch kind {
	case valueRequired:
		if !attached && i+1 < len(args) {
			i++
			vals = append(vals, args[i])
		}
	case valueOptional:
		if !attached && i+1 < len(args) && !isOpt(args[i+1]) {
			i++
			vals = append(vals, args[i])
		}
	case valueVariadic:
		for i+1 < len(args) && !isOpt(args[i+1]) {
			i++
			vals = append(vals, args[i])
		}
	}
	return vals, i
}

// checkValues flags the values that make a safe option dangerous.
func checkValues(name string, vals []string, inside func(string) bool, add func(arg, reason string)) {
	switch name {
	case "--add-dir":
		for _, v := range vals {
			if inside != nil && !inside(v) {
				add(name+" "+v, "gives Claude a folder outside the ones this machine serves")
			}
		}
	case "--permission-mode":
		for _, v := range vals {
			if !safePermissionModes[v] {
				add(name+" "+v, "lets tools run without asking")
			}
		}
		if len(vals) == 0 {
			add(name, "without a mode")
		}
	}
}
