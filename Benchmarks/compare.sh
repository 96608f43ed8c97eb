#!/usr/bin/env bash
# Paired before/after run of two `lanyard` release binaries (BENCHMARKS.md, "Comparing two builds"): each on a
# fresh SQLite database and a fresh PostgreSQL database, phases alternated A B B A for ROUNDS rounds at
# concurrency 64, then the median requests per second and server CPU per request of each side.
#   Benchmarks/compare.sh BEFORE_BIN_DIR AFTER_BIN_DIR [scenarios]
# Each folder holds a `lanyard` built with `swift build -c release --product lanyard`; `lanyard-bench` comes from
# AFTER (LANYARD_BENCHMARKS=1 swift build -c release --product lanyard-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE=$1; AFTER=$2
SCENARIOS=${3:-signin_existing,refresh,me,group_read}
ROUNDS=${ROUNDS:-3}; COUNT=${COUNT:-10000}; SECONDS_PER_PHASE=${SECONDS_PER_PHASE:-10}
DATABASES=${DATABASES:-sqlite,postgres}
OUT=$(mktemp -d /tmp/lanyard-compare.XXXXXX)
RESULTS="$OUT/compare.jsonl"
export PEER_HOME="${PEER_HOME:-/tmp/lanyard-peer-allauth}"
ulimit -n 65536 2>/dev/null || true

python3 Benchmarks/key_server.py --keys "$PEER_HOME/keys" --port 8702 &
KEY_SERVER_PID=$!
for _ in $(seq 1 50); do curl -fsS http://127.0.0.1:8702/apple/auth/keys >/dev/null 2>&1 && break; sleep 0.1; done
eval "$(LANYARD_TEST_POSTGRES_PORT=25435 LANYARD_TEST_POSTGRES_FSYNC=on scripts/start-test-postgres)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  kill "$KEY_SERVER_PID" 2>/dev/null || true
  scripts/stop-test-postgres
}
trap cleanup EXIT
POSTMASTER_PID=$(head -n 1 "$LANYARD_TEST_POSTGRES_DATA/postmaster.pid")
MASTER_KEY=$(head -c 32 /dev/urandom | base64)

start() {  # $1: bin dir, $2: database URL, $3: port; sets STARTED_PID
  local data; data=$(mktemp -d /tmp/lanyard-compare-server.XXXXXX)
  env -i PATH="$PATH" HOME="$HOME" LANYARD_PORT="$3" LANYARD_DATABASE_URL="$2" LANYARD_DATA_DIR="$data" \
    LANYARD_MASTER_KEY="$MASTER_KEY" LANYARD_ISSUER=http://lanyard.bench LANYARD_RATE_LIMITS=off \
    LANYARD_LOG_LEVEL=warning LANYARD_APPLE_CLIENT_IDS=com.example.app \
    LANYARD_GOOGLE_CLIENT_IDS=example-client-id.apps.googleusercontent.com \
    LANYARD_APPLE_JWKS_URL=http://127.0.0.1:8702/apple/auth/keys \
    LANYARD_GOOGLE_JWKS_URL=http://127.0.0.1:8702/google/oauth2/v3/certs \
    LANYARD_OIDC_PROVIDERS=acme LANYARD_OIDC_ACME_ISSUER=http://127.0.0.1:8702/acme \
    LANYARD_OIDC_ACME_CLIENT_IDS=acme-bench LANYARD_OIDC_ACME_NONCE=optional \
    "$1/lanyard" serve >"$data/server.log" 2>&1 &
  STARTED_PID=$!
  PIDS+=("$STARTED_PID")
  for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$3/healthz" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "lanyard did not start"; cat "$data/server.log"; exit 1
}

database_url() {  # $1: sqlite|postgres, $2: a name for a fresh database
  if [ "$1" = sqlite ]; then echo "sqlite:$(mktemp -d /tmp/lanyard-compare-db.XXXXXX)/lanyard.sqlite"; return; fi
  psql "$LANYARD_TEST_POSTGRES_URL" -qc "CREATE DATABASE $2" >/dev/null
  echo "${LANYARD_TEST_POSTGRES_URL/\/postgres\?/\/$2?}"
}

for database in ${DATABASES//,/ }; do
  start "$BEFORE" "$(database_url "$database" before_db)" 8721; BEFORE_PID=$STARTED_PID
  start "$AFTER" "$(database_url "$database" after_db)" 8722; AFTER_PID=$STARTED_PID
  db_pids=""; [ "$database" = postgres ] && db_pids=$POSTMASTER_PID
  for round in $(seq 1 "$ROUNDS"); do
    for side in before after after before; do
      if [ "$side" = before ]; then port=8721; pid=$BEFORE_PID; else port=8722; pid=$AFTER_PID; fi
      echo "== $database round $round: $side"
      "$AFTER/lanyard-bench" load --base "http://127.0.0.1:$port" --database "$database-$side" --server-pids "$pid" \
        --database-pids "$db_pids" --scenarios "$SCENARIOS" --concurrency 64 --count "$COUNT" \
        --max-seconds "$SECONDS_PER_PHASE" --keys-directory "$PEER_HOME/keys" --json "$RESULTS" --round "$round" >/dev/null
    done
  done
  kill "$BEFORE_PID" "$AFTER_PID"
done

python3 - "$RESULTS" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
table = {}
for row in rows:
    database, side = row["database"].rsplit("-", 1)
    table.setdefault((row["scenario"], database), {}).setdefault(side, []).append(row)
print("| scenario | database | before req/s | after req/s | after/before | before CPU µs/req | after CPU µs/req |")
print("|---|---|---|---|---|---|---|")
for (scenario, database), sides in sorted(table.items()):
    rps = {side: statistics.median(r["requests_per_second"] for r in runs) for side, runs in sides.items()}
    cpu = {side: statistics.median(r["server_cpu_microseconds_per_request"] for r in runs) for side, runs in sides.items()}
    print(f"| {scenario} | {database} | {rps['before']:,.0f} | {rps['after']:,.0f} | {rps['after'] / rps['before']:.2f} "
          f"| {cpu['before']:.0f} | {cpu['after']:.0f} |")
PY
echo "raw: $RESULTS"
