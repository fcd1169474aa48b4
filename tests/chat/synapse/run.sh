#!/usr/bin/env bash
# Runs a Synapse for the tests: `run.sh DIR PORT` writes a configuration into DIR (SQLite, one
# client listener on 127.0.0.1:PORT, no federation, rate limits raised so a test's burst of
# sends is not throttled) and execs the homeserver in the foreground, so the caller's child is
# Synapse itself and stopping it is one signal. Run again with the same DIR, it keeps the
# database, the signing key and the registration secret: a restart, not a new server.
#
# The registration secret (shared-secret registration, /_synapse/admin/v1/register) is in
# DIR/registration_secret. The Python comes from $SAYSO_SYNAPSE_PYTHON, else install.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mkdir -p "$1" && cd "$1" && pwd)
port=$2
python=${SAYSO_SYNAPSE_PYTHON:-$("$here/install.sh" | tail -n 1)/bin/python}

# Random secrets and an Ed25519 signing key ("ed25519 <key id> <unpadded base64 seed>", the
# format Synapse reads), made here in a few milliseconds instead of by Synapse's
# --generate-keys, which imports the whole server and takes seconds.
if [ ! -f "$dir/signing.key" ]; then
  "$python" - "$dir" <<'PY'
import base64, os, secrets, sys
d = sys.argv[1]
seed = base64.b64encode(os.urandom(32)).decode().rstrip("=")
open(os.path.join(d, "signing.key"), "w").write(f"ed25519 a_test {seed}\n")
for name in ("registration_secret", "macaroon_secret", "form_secret"):
    open(os.path.join(d, name), "w").write(secrets.token_hex(24))
PY
fi

limit='{per_second: 10000, burst_count: 10000}'
cat >"$dir/homeserver.yaml" <<EOF
server_name: "sayso.test"
pid_file: $dir/homeserver.pid
listeners:
  - port: $port
    bind_addresses: ['127.0.0.1']
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: $dir/homeserver.db
log_config: $dir/log.yaml
media_store_path: $dir/media
signing_key_path: $dir/signing.key
registration_shared_secret: "$(cat "$dir/registration_secret")"
macaroon_secret_key: "$(cat "$dir/macaroon_secret")"
form_secret: "$(cat "$dir/form_secret")"
report_stats: false
enable_metrics: false
trusted_key_servers: []
suppress_key_server_warning: true
federation_domain_whitelist: []
presence:
  enabled: false
rc_message: $limit
rc_registration: $limit
rc_login:
  address: $limit
  account: $limit
  failed_attempts: $limit
rc_joins:
  local: $limit
  remote: $limit
rc_invites:
  per_room: $limit
  per_user: $limit
  per_issuer: $limit
rc_admin_redaction: $limit
EOF

cat >"$dir/log.yaml" <<EOF
version: 1
formatters:
  precise:
    format: '%(asctime)s - %(name)s - %(lineno)d - %(levelname)s - %(message)s'
handlers:
  file:
    class: logging.FileHandler
    formatter: precise
    filename: $dir/homeserver.log
root:
  level: WARNING
  handlers: [file]
disable_existing_loggers: false
EOF

exec "$python" -m synapse.app.homeserver -c "$dir/homeserver.yaml"
