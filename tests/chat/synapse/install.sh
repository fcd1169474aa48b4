#!/usr/bin/env bash
# Installs the pinned Synapse and matrix-nio (requirements.txt beside this script) into a
# virtual environment kept between runs, once per machine: its directory is named for a hash
# of requirements.txt and the Python version, so a changed pin makes a new one and an
# unchanged pin reuses the old. Prints the environment's directory as its last line.
#
# Where: $SAYSO_SYNAPSE_VENV if set, else ~/.cache/sayso/synapse/<hash>-py<version>.
# Concurrent callers (parallel tests, CI) wait on a lock; one installs, the others reuse it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
pyver=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
key=$(sha256sum "$here/requirements.txt" | cut -c1-16)
dir="${SAYSO_SYNAPSE_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/sayso/synapse/${key}-py${pyver}}"

mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9

# The marker is written last, so a half-finished install (killed, out of disk) is redone.
if [ ! -f "$dir/.installed" ]; then
  start=$EPOCHREALTIME
  rm -rf "$dir"
  "$python" -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check --timeout 60 \
    -r "$here/requirements.txt" >&2
  "$dir/bin/python" -c 'import synapse.app.homeserver, nio' >&2
  touch "$dir/.installed"
  awk -v s="$start" -v e="$EPOCHREALTIME" 'BEGIN { printf "Synapse and matrix-nio installed in %.1f s\n", e - s }' >&2
fi
echo "$dir"
