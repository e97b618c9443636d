#!/bin/sh
# After corral's package is removed: let systemd forget its units. The hub's
# data in /var/lib/corral and its account stay.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
exit 0
