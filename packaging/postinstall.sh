#!/bin/sh
# After corral's package is installed: make the hub's account (used only by
# corral-hub.service) and let systemd see the new units. Nothing is enabled
# or started: see /usr/share/doc/corral/operations.md.
set -e
if command -v systemd-sysusers >/dev/null 2>&1; then
	systemd-sysusers /usr/lib/sysusers.d/corral.conf || true
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
exit 0
