// Package hooks is what passes between Claude Code and corral's hooks
// (checked against 2.1.197): the payload Claude writes to a hook's stdin
// (Parse, and ParsePrefix for a payload cut at its limit), the status-line
// input (ParseStatusLine), the settings file corral hands to `claude
// --settings` (SettingsJSON), and the global install in
// ~/.claude/settings.json that a person runs explicitly (`corral hooks
// install --global`): InstallGlobal and UninstallGlobal merge rather than
// clobber, keep a timestamped backup, and write atomically. Those two are
// the only writes to Claude's files; everything else here only reads.
package hooks
