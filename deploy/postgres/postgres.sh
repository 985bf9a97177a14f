#!/usr/bin/env bash
# PostgreSQL for development and tests, from Debian's packages, without Docker.
#
#   postgres.sh up       install (apt) if needed, initdb, start, create database, print the DSN
#   postgres.sh down     stop it (fast shutdown, then immediate), idempotent
#   postgres.sh status   exit 0 if running (and print the DSN), 1 if not
#   postgres.sh dsn      print the DSN
#
# Environment (all optional):
#   PG_PORT          TCP port on 127.0.0.1 (default 15432)
#   PG_DATA_DIR      cluster directory (default /tmp/mahjong-planet-pg-$PG_PORT); the server log
#                    (postgres.log) and the unix socket live in it too
#   PG_USER          OS user the server runs as when this script runs as root (default postgres)
#   PG_DB            database to create (default mahjong), owned by role PG_ROLE
#   PG_ROLE          login role (default mahjong, password mahjong; auth is trust on 127.0.0.1)
#   PG_DURABLE       1 keeps fsync/synchronous_commit on; default 0 (test data, speed first)
#   PG_START_TIMEOUT seconds to wait for readiness (default 60)
set -euo pipefail

PORT="${PG_PORT:-15432}"
DATA_DIR="${PG_DATA_DIR:-/tmp/mahjong-planet-pg-$PORT}"
RUN_AS="${PG_USER:-postgres}"
DB="${PG_DB:-mahjong}"
ROLE="${PG_ROLE:-mahjong}"
DURABLE="${PG_DURABLE:-0}"
START_TIMEOUT="${PG_START_TIMEOUT:-60}"
LOG_FILE="$DATA_DIR/postgres.log"
LOCK_FILE="${TMPDIR:-/tmp}/.mahjong-planet-pg-$PORT.$(id -u).lock"
DSN="postgresql://$ROLE:$ROLE@127.0.0.1:$PORT/$DB"

log() { echo "postgres.sh: $*" >&2; }
die() { log "$*"; exit 1; }

is_root() { [ "$(id -u)" = 0 ]; }

find_bindir() {
    local d
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
    done
    d="$(dirname "$(command -v pg_ctl 2>/dev/null || echo /nonexistent/x)")"
    [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
    return 1
}

ensure_installed() {
    BIN="$(find_bindir)" && return 0
    is_root || die "PostgreSQL not found; install it (sudo apt-get install postgresql)"
    log "installing PostgreSQL with apt-get"
    apt-get update -qq >&2 || true
    # Only the server binaries are needed; policy-rc.d keeps the package from starting its
    # own cluster on 5432 where an init system is present.
    local policy=/usr/sbin/policy-rc.d created_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created_policy=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2 || {
        [ "$created_policy" = 1 ] && rm -f "$policy"
        die "apt-get install postgresql failed"
    }
    [ "$created_policy" = 1 ] && rm -f "$policy"
    BIN="$(find_bindir)" || die "PostgreSQL installed but initdb/pg_ctl not found"
}

# Run a server command as the cluster's owner (pg_ctl and initdb refuse to run as root).
as_owner() {
    if is_root; then
        id -u "$RUN_AS" >/dev/null 2>&1 ||
            useradd --system --home-dir /var/lib/postgresql --shell /bin/bash "$RUN_AS"
        runuser -u "$RUN_AS" -- "$@"
    else
        "$@"
    fi
}

server_opts() {
    local opts="-c listen_addresses=127.0.0.1 -p $PORT -c unix_socket_directories=$DATA_DIR"
    if [ "$DURABLE" != 1 ]; then
        opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    fi
    echo "$opts"
}

running() { [ -f "$DATA_DIR/postmaster.pid" ] && as_owner "$BIN/pg_ctl" -D "$DATA_DIR" status >/dev/null 2>&1; }

ready() { "$BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" -d postgres -U postgres; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

psql_admin() { "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U postgres -d postgres "$@"; }

init_cluster() {
    mkdir -p "$DATA_DIR"
    is_root && chown "$RUN_AS": "$DATA_DIR"
    chmod 700 "$DATA_DIR"
    if [ ! -f "$DATA_DIR/PG_VERSION" ]; then
        log "initdb in $DATA_DIR"
        as_owner "$BIN/initdb" -D "$DATA_DIR" -U postgres --auth=trust -E UTF8 --no-locale \
            >"$DATA_DIR.initdb.log" 2>&1 || { cat "$DATA_DIR.initdb.log" >&2; die "initdb failed"; }
        rm -f "$DATA_DIR.initdb.log"
    fi
}

create_db() {
    if [ "$(psql_admin -tAc "SELECT 1 FROM pg_roles WHERE rolname = '$ROLE'")" != 1 ]; then
        psql_admin -c "CREATE ROLE \"$ROLE\" LOGIN CREATEDB PASSWORD '$ROLE'"
    fi
    if [ "$(psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != 1 ]; then
        psql_admin -c "CREATE DATABASE \"$DB\" OWNER \"$ROLE\""
    fi
}

up() {
    ensure_installed
    exec 9>"$LOCK_FILE"
    flock 9  # concurrent `up`s (e.g. pytest-xdist workers) start one server
    if running && ready; then
        log "already running"
        create_db
        echo "$DSN"
        return 0
    fi
    if ! running; then
        port_open "$PORT" && die "port $PORT is already taken by another process; set PG_PORT"
        init_cluster
        local start=$SECONDS
        log "starting PostgreSQL ($(basename "$(dirname "$BIN")")) on 127.0.0.1:$PORT (log: $LOG_FILE)"
        # fd 9 (the lock) closed so that the server does not hold it.
        as_owner "$BIN/pg_ctl" -D "$DATA_DIR" -l "$LOG_FILE" -o "$(server_opts)" \
            -w -t "$START_TIMEOUT" start >/dev/null 2>&1 </dev/null 9>&- ||
            { tail -n 30 "$LOG_FILE" >&2 || true; die "pg_ctl start failed (log: $LOG_FILE)"; }
        log "started in $((SECONDS - start)) s"
    fi
    local deadline=$((SECONDS + START_TIMEOUT))
    until ready; do
        [ "$SECONDS" -ge "$deadline" ] && { tail -n 30 "$LOG_FILE" >&2; die "not ready after $START_TIMEOUT s"; }
        sleep 0.3
    done
    create_db
    echo "$DSN"
}

down() {
    BIN="$(find_bindir)" || { log "PostgreSQL not installed; nothing to stop"; return 0; }
    exec 9>"$LOCK_FILE"
    flock 9
    if ! running; then
        log "not running"
        return 0
    fi
    log "stopping"
    as_owner "$BIN/pg_ctl" -D "$DATA_DIR" -m fast -w -t 30 stop >/dev/null 2>&1 </dev/null 9>&- ||
        as_owner "$BIN/pg_ctl" -D "$DATA_DIR" -m immediate -w -t 30 stop >/dev/null 2>&1 </dev/null 9>&- ||
        die "could not stop the server in $DATA_DIR"
    log "stopped"
}

status() {
    BIN="$(find_bindir)" || { echo "not installed"; return 1; }
    if running; then
        if ready; then echo "running: $DSN"; else echo "starting: not accepting connections yet"; fi
        return 0
    fi
    echo "not running"
    return 1
}

case "${1:-}" in
    up) up ;;
    down) down ;;
    status) status ;;
    dsn) echo "$DSN" ;;
    *) echo "usage: $0 {up|down|status|dsn}" >&2; exit 2 ;;
esac
