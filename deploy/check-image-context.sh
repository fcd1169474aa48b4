#!/usr/bin/env bash
# The image's build, checked without a Docker engine: copy exactly what the Dockerfile's build
# stage COPYs (read from its COPY lines, so the check follows the Dockerfile) into an empty
# folder, then
#   1. `cargo fetch --locked`, then `cargo metadata --locked --offline` there: the workspace,
#      its members, the patched crates of [patch.crates-io] and Cargo.lock must all be in the
#      copy;
#   2. every file the sources pull in at compile time (include_str!, include_bytes!,
#      sqlx::migrate!, askama templates, fluent-templates' locales) must exist in the copy;
#   3. with SAYSO_IMAGE_CHECK_BUILD=1, `cargo check --locked --offline --bin sayso` there too
#      (a few minutes cold; target dir under target/image-context).
# Usage: deploy/check-image-context.sh [Dockerfile]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dockerfile="${1:-Dockerfile}"

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
fail() {
  echo "image context: $*" >&2
  exit 1
}

# A source the .dockerignore leaves out of the context would be missing in `docker build`
# although it is here; only whole top-level names are compared, which is how the file is
# written.
ignored() {
  [ -f .dockerignore ] && grep -Eqx "[[:space:]]*/?$1/?[[:space:]]*" .dockerignore
}

copied=0
# COPY lines of the build stages (those with --from copy between stages), continuation
# lines joined first.
while read -r -a words; do
  [ "${words[0]^^}" = COPY ] || continue
  args=()
  from=""
  for w in "${words[@]:1}"; do
    case "$w" in
      --from=*) from=1 ;;
      --*) ;;
      *) args+=("$w") ;;
    esac
  done
  [ -z "$from" ] || continue
  [ "${#args[@]}" -ge 2 ] || fail "cannot read: ${words[*]}"
  dest="${args[-1]}"
  unset 'args[-1]'
  case "$dest" in /*) fail "absolute COPY destination $dest (the check knows only WORKDIR-relative ones)" ;; esac
  for pattern in "${args[@]}"; do
    matched=0
    # Unquoted on purpose: a COPY source may be a glob, as in the Dockerfile.
    for src in $pattern; do
      [ -e "$src" ] || continue
      matched=1
      if ignored "$src"; then fail "$src is copied but .dockerignore leaves it out"; fi
      if [ "${dest: -1}" = / ] || [ "$dest" = . ]; then
        mkdir -p "$ctx/$dest"
        cp -a "$src" "$ctx/$dest"
      else
        mkdir -p "$(dirname "$ctx/$dest")"
        cp -a "$src" "$ctx/$dest"
      fi
      copied=$((copied + 1))
    done
    [ "$matched" = 1 ] || fail "COPY source $pattern does not exist"
  done
done < <(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$dockerfile" | grep -Ei '^[[:space:]]*COPY[[:space:]]')
[ "$copied" -gt 0 ] || fail "no COPY lines in $dockerfile"
echo "== image context: $copied paths copied from the COPY lines of $dockerfile"

# 1. The workspace resolves from the copy alone, with the lock file as it is. The crates of
# Cargo.lock (for every platform: metadata reads them all) come from crates.io into cargo's
# cache first, as `docker build` would download them; a path the copy lacks fails either way.
(cd "$ctx" && cargo fetch --locked --quiet && cargo metadata --locked --offline --format-version 1 >/dev/null) ||
  fail "cargo metadata --locked --offline fails on exactly what $dockerfile copies"
echo "== image context: cargo metadata --locked --offline passes"

# 2. Files the compiler reads, named in the sources. include_str!/include_bytes! are relative
# to the file that names them; sqlx::migrate! to the crate's manifest; askama's
# #[template(path = …)] to templates/.
missing=0
while IFS=: read -r file _ line; do
  rel=$(sed -nE 's/.*include_(str|bytes)!\("([^"]+)"\).*/\2/p' <<<"$line")
  [ -n "$rel" ] || continue
  if [ ! -e "$ctx/$(dirname "$file")/$rel" ]; then
    echo "image context: $file needs $rel, which the Dockerfile does not copy" >&2
    missing=1
  fi
done < <(cd "$ctx" && grep -rnE 'include_(str|bytes)!\("' --include='*.rs' src)
while IFS=: read -r file _ line; do
  rel=$(sed -nE 's/.*migrate!\("([^"]+)"\).*/\1/p' <<<"$line")
  [ -n "$rel" ] || continue
  [ -d "$ctx/$rel" ] || { echo "image context: $file needs $rel/, not copied" >&2; missing=1; }
done < <(cd "$ctx" && grep -rnE 'migrate!\("' --include='*.rs' src)
while IFS=: read -r file _ line; do
  rel=$(sed -nE 's/.*template\(.*path = "([^"]+)".*/\1/p' <<<"$line")
  [ -n "$rel" ] || continue
  [ -e "$ctx/templates/$rel" ] || { echo "image context: $file needs templates/$rel, not copied" >&2; missing=1; }
done < <(cd "$ctx" && grep -rnE 'template\(.*path = "' --include='*.rs' src)
# fluent-templates' static_loader! reads its `locales: "…"` folder, relative to the manifest.
while IFS=: read -r file _ line; do
  rel=$(sed -nE 's/.*locales: "([^"]+)".*/\1/p' <<<"$line")
  [ -n "$rel" ] || continue
  [ -d "$ctx/$rel" ] || { echo "image context: $file needs $rel/, not copied" >&2; missing=1; }
done < <(cd "$ctx" && grep -rnE 'locales: "' --include='*.rs' src)
[ "$missing" = 0 ] || fail "files the build reads are missing from the copy"
echo "== image context: every file the sources include is in the copy"

# 3. Optionally, compile it.
if [ "${SAYSO_IMAGE_CHECK_BUILD:-0}" = 1 ]; then
  CARGO_TARGET_DIR="$root/target/image-context" \
    bash -c "cd '$ctx' && cargo check --locked --offline --bin sayso" ||
    fail "cargo check fails on exactly what $dockerfile copies"
  echo "== image context: cargo check --locked --offline --bin sayso passes"
fi
