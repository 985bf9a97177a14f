#!/usr/bin/env bash
# Debian's Prometheus scraping `make cluster`, with the shipped configuration and alerts.
#
#   prometheus.sh install  install Debian's prometheus package when it is missing (promtool too)
#   prometheus.sh up       install, start in the background, wait until /-/ready answers
#   prometheus.sh down     stop it (SIGTERM, then SIGKILL after 30 s)
#   prometheus.sh status   exit 0 if running (and print where), 1 if not
#
# Environment (all optional):
#   PROMETHEUS_PORT        web/API listener on 127.0.0.1 (default 9090)
#   PROMETHEUS_CONFIG      configuration (default deploy/prometheus/cluster.yml)
#   PROMETHEUS_RUN_DIR     pid file, log and data (default ./cluster/prometheus)
#   PROMETHEUS_RETENTION   how long samples are kept (default 2d)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PORT="${PROMETHEUS_PORT:-9090}"
CONFIG="${PROMETHEUS_CONFIG:-$HERE/cluster.yml}"
RUN_DIR="${PROMETHEUS_RUN_DIR:-$REPO/cluster/prometheus}"
PID_FILE="$RUN_DIR/prometheus.pid"
LOG_FILE="$RUN_DIR/prometheus.log"

log() { echo "prometheus.sh: $*" >&2; }
die() { log "$*"; exit 1; }

install() {
    if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
        return 0
    fi
    log "installing Debian's prometheus package (prometheus and promtool)"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    # The package's own service is not wanted: this script runs it with the cluster's config.
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive \
        $sudo apt-get install -y -qq --no-install-recommends prometheus >/dev/null
    # Where the package's init started its own daemon on :9090, stop it (ours uses our config).
    $sudo service prometheus stop >/dev/null 2>&1 || true
    command -v promtool >/dev/null || die "the prometheus package did not install promtool"
}

running_pid() {
    local pid
    pid="$(cat "$PID_FILE" 2>/dev/null)" || return 1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "prometheus --config.file" || return 1
    echo "$pid"
}

up() {
    install
    local pid
    if pid="$(running_pid)"; then
        log "already running (pid $pid) on http://127.0.0.1:$PORT"
        return 0
    fi
    mkdir -p "$RUN_DIR/data"
    promtool check config "$CONFIG" >/dev/null || die "promtool check config $CONFIG failed"
    nohup prometheus --config.file="$CONFIG" --storage.tsdb.path="$RUN_DIR/data" \
        --storage.tsdb.retention.time="${PROMETHEUS_RETENTION:-2d}" \
        --web.listen-address="127.0.0.1:$PORT" >>"$LOG_FILE" 2>&1 </dev/null &
    echo $! >"$PID_FILE"
    for _ in $(seq 1 120); do
        if curl -fsS "http://127.0.0.1:$PORT/-/ready" >/dev/null 2>&1; then
            log "ready on http://127.0.0.1:$PORT (alerts: /alerts; log $LOG_FILE)"
            return 0
        fi
        running_pid >/dev/null || die "prometheus exited; see $LOG_FILE"
        sleep 0.5
    done
    die "prometheus did not answer /-/ready within 60 s; see $LOG_FILE"
}

down() {
    local pid
    pid="$(running_pid)" || { log "not running"; return 0; }
    kill -TERM "$pid"
    for _ in $(seq 1 60); do
        kill -0 "$pid" 2>/dev/null || { rm -f "$PID_FILE"; log "stopped"; return 0; }
        sleep 0.5
    done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$PID_FILE"
}

status() {
    local pid
    pid="$(running_pid)" || { echo "prometheus: not running"; return 1; }
    echo "prometheus: pid $pid, http://127.0.0.1:$PORT, config $CONFIG, log $LOG_FILE"
}

case "${1:-}" in
    install) install ;;
    up) up ;;
    down) down ;;
    status) status ;;
    *) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
