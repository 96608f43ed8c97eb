#!/usr/bin/env bash
# Lanyard's benchmark suite (see BENCHMARKS.md): micro-benchmarks, then the same HTTP scenarios against
# Lanyard (SQLite and PostgreSQL), and the django-allauth peer when PEER names its folder, on this machine,
# loopback only.
#   Benchmarks/run.sh                           full run (several minutes), Lanyard alone
#   PEER=/path/to/peers/allauth Benchmarks/run.sh   the same, with allauth side by side
#   QUICK=1 Benchmarks/run.sh                   small counts, to check the harness
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT="$ROOT/Benchmarks/results"
mkdir -p "$OUT"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RESULTS="$OUT/run-$STAMP.jsonl"
PEER="${PEER:-}"
export PEER_HOME="${PEER_HOME:-/tmp/lanyard-peer-allauth}"
COUNT=${COUNT:-10000}; SECONDS_PER_PHASE=${SECONDS_PER_PHASE:-10}; PEER_COUNT=${PEER_COUNT:-1000}
if [ "${QUICK:-0}" = 1 ]; then COUNT=300; SECONDS_PER_PHASE=3; PEER_COUNT=60; fi
SQLITE_PORT=8711; POSTGRES_PORT=8712; SECOND_PORT=8713
STREAMS_IDLE=${STREAMS_IDLE:-1000}; STREAMS_MANY=${STREAMS_MANY:-10000}
if [ "${QUICK:-0}" = 1 ]; then STREAMS_IDLE=100; STREAMS_MANY=300; fi
# Every idle change stream is an open socket in the server and in the load generator.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

export LANYARD_BENCHMARKS=1  # the load generator is built only when asked (Package.swift)
swift build -c release --product lanyard
swift build -c release --product lanyard-bench
BIN=$(swift build -c release --show-bin-path)

# Provider keys: the peer's identity provider when the peer runs, else our own key server (same port, paths and
# key files, so lanyard-bench signs alike).
KEY_SERVER_PID=""
if [ -n "$PEER" ]; then
  "$PEER/setup.sh" >/dev/null
  "$PEER/stop.sh" >/dev/null 2>&1 || true
  RESET_DB=1 "$PEER/run.sh"
else
  python3 Benchmarks/key_server.py --keys "$PEER_HOME/keys" --port 8702 &
  KEY_SERVER_PID=$!
  for _ in $(seq 1 50); do curl -fsS http://127.0.0.1:8702/apple/auth/keys >/dev/null 2>&1 && break; sleep 0.1; done
fi
eval "$(LANYARD_TEST_POSTGRES_PORT=25434 LANYARD_TEST_POSTGRES_FSYNC=on scripts/start-test-postgres)"
SERVER_PIDS=()
cleanup() {
  for pid in "${SERVER_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ -n "$PEER" ]; then "$PEER/stop.sh" >/dev/null 2>&1 || true; fi
  if [ -n "$KEY_SERVER_PID" ]; then kill "$KEY_SERVER_PID" 2>/dev/null || true; fi
  scripts/stop-test-postgres
}
trap cleanup EXIT

echo "== micro-benchmarks (one core)"
"$BIN/lanyard-bench" micro --json "$OUT/micro-$STAMP.jsonl"

# One master key for every instance: the two on PostgreSQL share the signing keys it seals.
MASTER_KEY=$(head -c 32 /dev/urandom | base64)
start_lanyard() {  # $1: database URL, $2: port; sets STARTED_PID
  local data; data=$(mktemp -d /tmp/lanyard-bench.XXXXXX)
  env -i PATH="$PATH" HOME="$HOME" \
    LANYARD_PORT="$2" LANYARD_DATABASE_URL="$1" LANYARD_DATA_DIR="$data" \
    LANYARD_MASTER_KEY="$MASTER_KEY" LANYARD_ISSUER=http://lanyard.bench \
    LANYARD_RATE_LIMITS=off LANYARD_LOG_LEVEL=warning LANYARD_STREAM_MAX=50000 \
    LANYARD_APPLE_CLIENT_IDS=com.example.app \
    LANYARD_GOOGLE_CLIENT_IDS=example-client-id.apps.googleusercontent.com \
    LANYARD_APPLE_JWKS_URL=http://127.0.0.1:8702/apple/auth/keys \
    LANYARD_GOOGLE_JWKS_URL=http://127.0.0.1:8702/google/oauth2/v3/certs \
    "$BIN/lanyard" serve >"$data/server.log" 2>&1 &
  STARTED_PID=$!
  SERVER_PIDS+=("$STARTED_PID")
  for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$2/healthz" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "lanyard did not start"; cat "$data/server.log"; exit 1
}

load() {  # target base database pids scenario concurrency count [database-pids [--round N]]
  "$BIN/lanyard-bench" load --target "$1" --base "$2" --database "$3" --server-pids "$4" --scenarios "$5" \
    --concurrency "$6" --count "$7" --max-seconds "$SECONDS_PER_PHASE" --keys-directory "$PEER_HOME/keys" \
    --database-pids "${8:-}" --json "$RESULTS" "${@:9}"
}

# All three servers run side by side (an idle one takes no CPU), and each scenario is measured on the three
# back to back: the machine's speed drifts over minutes, so the ratios compare phases minutes apart, not
# a quarter of an hour.
psql "$LANYARD_TEST_POSTGRES_URL" -qc "DROP DATABASE IF EXISTS lanyard_bench" -c "CREATE DATABASE lanyard_bench"
start_lanyard "sqlite:$(mktemp -d /tmp/lanyard-bench-db.XXXXXX)/lanyard.sqlite" "$SQLITE_PORT"; SQLITE_PID=$STARTED_PID
start_lanyard "${LANYARD_TEST_POSTGRES_URL/\/postgres\?/\/lanyard_bench?}" "$POSTGRES_PORT"; POSTGRES_PID=$STARTED_PID
POSTMASTER_PID=$(head -n 1 "$LANYARD_TEST_POSTGRES_DATA/postmaster.pid")  # PostgreSQL's backends are its children
GUNICORN_PID=""
if [ -n "$PEER" ]; then GUNICORN_PID=$(cat "$PEER_HOME/run/gunicorn.pid"); fi

# Paired rounds: each ratio of the targets then compares phases measured seconds apart, not a minute. After
# each scenario's sweep, ROUNDS times: Lanyard on PostgreSQL and on SQLite at 64, then allauth at its best
# concurrency in the sweep (SQLite in the middle, next to both phases it is compared with). The report takes
# the median of each ratio over the rounds (BENCHMARKS.md, "How to run"). The phases are the sweep's:
# COUNT requests for Lanyard, PEER_COUNT for allauth.
ROUNDS=${ROUNDS:-3}
if [ "${QUICK:-0}" = 1 ]; then ROUNDS=1; fi

for scenario in signin_new signin_existing refresh me link healthz readyz; do
  echo "== $scenario"
  load lanyard "http://127.0.0.1:$SQLITE_PORT" sqlite "$SQLITE_PID" "$scenario" 1,16,64 "$COUNT"
  load lanyard "http://127.0.0.1:$POSTGRES_PORT" postgres "$POSTGRES_PID" "$scenario" 1,16,64 "$COUNT" "$POSTMASTER_PID"
  case "$PEER,$scenario" in
    ,*) ;;
    *,signin_new|*,signin_existing|*,me|*,link)
      load allauth http://127.0.0.1:8701 sqlite "$GUNICORN_PID" "$scenario" 1,4,8,16,64 "$PEER_COUNT" ;;
  esac
  case "$scenario" in healthz|readyz) continue ;; esac
  best=""
  if [ -n "$PEER" ]; then best=$(python3 Benchmarks/report.py --best-concurrency allauth "$scenario" "$RESULTS"); fi
  for round in $(seq 1 "$ROUNDS"); do
    echo "== $scenario, round $round"
    load lanyard "http://127.0.0.1:$POSTGRES_PORT" postgres "$POSTGRES_PID" "$scenario" 64 "$COUNT" "$POSTMASTER_PID" --round "$round"
    load lanyard "http://127.0.0.1:$SQLITE_PORT" sqlite "$SQLITE_PID" "$scenario" 64 "$COUNT" "" --round "$round"
    if [ -n "$best" ]; then
      load allauth http://127.0.0.1:8701 sqlite "$GUNICORN_PID" "$scenario" "$best" "$PEER_COUNT" "" --round "$round"
    fi
  done
done

# Change streams: latency, memory per idle stream, writes with streams open (BENCHMARKS.md, "Live changes").
STREAMS="$OUT/streams-$STAMP.jsonl"
streams() {  # base server-pid database idle [extra options]
  "$BIN/lanyard-bench" streams --base "$1" --server-pid "$2" --database "$3" --idle "$4" \
    --keys-directory "$PEER_HOME/keys" --json "$STREAMS" --samples "${STREAM_SAMPLES:-300}" "${@:5}"
}
echo "== change streams"
streams "http://127.0.0.1:$SQLITE_PORT" "$SQLITE_PID" sqlite "$STREAMS_IDLE"
streams "http://127.0.0.1:$POSTGRES_PORT" "$POSTGRES_PID" postgres "$STREAMS_IDLE"
streams "http://127.0.0.1:$SQLITE_PORT" "$SQLITE_PID" sqlite "$STREAMS_MANY" --write-seconds 5
# Across instances: a second PostgreSQL instance holds the watched stream.
start_lanyard "${LANYARD_TEST_POSTGRES_URL/\/postgres\?/\/lanyard_bench?}" "$SECOND_PORT"
streams "http://127.0.0.1:$POSTGRES_PORT" "$POSTGRES_PID" postgres "$STREAMS_IDLE" --stream-base "http://127.0.0.1:$SECOND_PORT"

# Merging two full accounts: the time per size, and other people's sign-ins meanwhile (BENCHMARKS.md).
MERGES="$OUT/merges-$STAMP.jsonl"
MERGE_SIZES=${MERGE_SIZES:-10,1000,10000}
if [ "${QUICK:-0}" = 1 ]; then MERGE_SIZES=10,100; fi
echo "== merges"
for target in "sqlite $SQLITE_PORT $SQLITE_PID" "postgres $POSTGRES_PORT $POSTGRES_PID"; do
  set -- $target
  "$BIN/lanyard-bench" merges --base "http://127.0.0.1:$2" --server-pids "$3" --database "$1" --sizes "$MERGE_SIZES" \
    --keys-directory "$PEER_HOME/keys" --json "$MERGES"
done

python3 Benchmarks/report.py "$RESULTS" "$OUT/micro-$STAMP.jsonl" "$STREAMS" | tee "$OUT/report-$STAMP.md"
