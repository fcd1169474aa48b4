#!/usr/bin/env bash
# Installs the real harnesses the tests drive (tests/harnesses.rs) at the versions pinned in
# tests/harnesses/npm and tests/harnesses/omp, from npm, into a cache kept between runs:
# $SAYSO_HARNESS_DIR, else ~/.cache/sayso/harnesses. Each program is linked from its bin/.
# A set whose package.json and package-lock.json has not changed since it was installed is left as it is.
#
# Claude Code and Bun need their install scripts (they put the platform's binary in place),
# so scripts run: these are the vendors' own packages at pinned versions and integrity hashes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${SAYSO_HARNESS_DIR:-$HOME/.cache/sayso/harnesses}"
mkdir -p "$dir/bin"

install_set() {
  local name="$1"
  local want have
  want=$(sha256sum "$here/$name/package.json" "$here/$name/package-lock.json" | sha256sum | cut -c1-64)
  have=$(cat "$dir/$name/.installed" 2>/dev/null || true)
  if [ "$want" = "$have" ] && [ -d "$dir/$name/node_modules" ]; then
    echo "== harnesses: $name is installed"
    return
  fi
  echo "== harnesses: installing $name into $dir/$name"
  rm -rf "$dir/$name"
  mkdir -p "$dir/$name"
  cp "$here/$name/package.json" "$here/$name/package-lock.json" "$dir/$name/"
  # `npm install` with the lock in place installs the locked versions; `npm ci` would refuse
  # oh-my-pi's lock, whose optional per-platform packages are not all published.
  (cd "$dir/$name" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$want" >"$dir/$name/.installed"
}

install_set npm
install_set omp

link() {
  local set="$1" program="$2"
  ln -sfn "$dir/$set/node_modules/.bin/$program" "$dir/bin/$program"
}
for program in claude codex gemini copilot pi bun; do link npm "$program"; done
link omp omp

echo "== harnesses: $("$dir/bin/claude" --version | head -n 1); $("$dir/bin/codex" --version);" \
  "gemini-cli $("$dir/bin/gemini" --version); $("$dir/bin/copilot" --version | head -n 1);" \
  "pi $("$dir/bin/pi" --version 2>&1); omp $(PATH="$dir/bin:$PATH" "$dir/bin/omp" --version 2>/dev/null | head -n 1); bun $("$dir/bin/bun" --version)"
