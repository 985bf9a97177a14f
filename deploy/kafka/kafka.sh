#!/usr/bin/env bash
# Single-node Apache Kafka (KRaft, combined broker+controller) for development and tests,
# without Docker: the broker's jars come from Maven Central and run on the local JDK.
#
#   kafka.sh fetch    download the pinned broker + slf4j-simple into the cache (idempotent)
#   kafka.sh up       fetch, format storage, start in the background, wait until it answers
#   kafka.sh down     stop it (SIGTERM, then SIGKILL after KAFKA_STOP_TIMEOUT s)
#   kafka.sh status   exit 0 if running (and print where), 1 if not
#
# Environment (all optional):
#   KAFKA_PORT             client listener on 127.0.0.1 (default 19092)
#   KAFKA_CONTROLLER_PORT  KRaft controller listener (default KAFKA_PORT+1)
#   KAFKA_DATA_DIR         log.dirs (default $KAFKA_RUN_DIR/data)
#   KAFKA_FRESH=1          with `up` on a stopped broker: delete its data first
#   KAFKA_RUN_DIR          config, pid file, log file (default /tmp/mahjong-planet-kafka-$KAFKA_PORT)
#   KAFKA_HEAP             JVM heap flags (default "-Xms256m -Xmx512m")
#   KAFKA_START_TIMEOUT    seconds to wait for the broker to answer (default 120)
#   KAFKA_STOP_TIMEOUT     seconds to wait after SIGTERM before SIGKILL (default 30)
#   XDG_CACHE_HOME         jar cache root (default ~/.cache); jars go to
#                          $XDG_CACHE_HOME/mahjong-planet/kafka-<version>/libs
#   JAVA                   java binary (default: $JAVA_HOME/bin/java, else JDK 17, else `java`)
set -euo pipefail

# The one pinned broker version. aiokafka's transactional producer only speaks v0 of the
# transaction requests; deploy/kafka/verify_transactions.py checks that this broker accepts them.
KAFKA_VERSION=4.4.0

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/mahjong-planet"
KAFKA_HOME="$CACHE_ROOT/kafka-$KAFKA_VERSION"
LIBS="$KAFKA_HOME/libs"

PORT="${KAFKA_PORT:-19092}"
CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-$((PORT + 1))}"
RUN_DIR="${KAFKA_RUN_DIR:-/tmp/mahjong-planet-kafka-$PORT}"
DATA_DIR="${KAFKA_DATA_DIR:-$RUN_DIR/data}"
PID_FILE="$RUN_DIR/kafka.pid"
LOG_FILE="$RUN_DIR/kafka.log"
CONFIG="$RUN_DIR/server.properties"
HEAP="${KAFKA_HEAP:--Xms256m -Xmx512m}"
START_TIMEOUT="${KAFKA_START_TIMEOUT:-120}"
STOP_TIMEOUT="${KAFKA_STOP_TIMEOUT:-30}"
BOOTSTRAP="127.0.0.1:$PORT"

log() { echo "kafka.sh: $*" >&2; }
die() { log "$*"; exit 1; }

as_root_install() {  # apt package names...
    [ "$(id -u)" = 0 ] || die "missing $*; install it (apt-get install $*)"
    log "installing $* with apt-get"
    apt-get update -qq >&2 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

find_java() {
    if [ -n "${JAVA:-}" ]; then echo "$JAVA"; return; fi
    if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then echo "$JAVA_HOME/bin/java"; return; fi
    local j
    for j in /usr/lib/jvm/java-17-openjdk-*/bin/java /usr/lib/jvm/java-21-openjdk-*/bin/java; do
        [ -x "$j" ] && { echo "$j"; return; }
    done
    command -v java >/dev/null || as_root_install openjdk-17-jre-headless
    command -v java
}

find_python() {
    local p
    for p in "$HERE/../../.venv/bin/python" python3 python; do
        command -v "$p" >/dev/null 2>&1 && { echo "$p"; return; }
    done
    return 1
}

fetch() {
    if [ -f "$KAFKA_HOME/.complete" ]; then
        return 0
    fi
    command -v mvn >/dev/null || as_root_install maven
    mkdir -p "$CACHE_ROOT"
    local tmp
    tmp="$(mktemp -d "$CACHE_ROOT/.kafka-$KAFKA_VERSION.XXXXXX")"
    log "fetching org.apache.kafka:kafka_2.13:$KAFKA_VERSION and its dependencies from Maven Central"
    local start=$SECONDS
    # A private local repository inside the temp dir: the cache holds only the jars, and
    # removing kafka-<version>/ really starts from nothing.
    if ! mvn -B -q -f "$HERE/pom.xml" \
        -Dkafka.version="$KAFKA_VERSION" \
        -Dmaven.repo.local="$tmp/m2" \
        org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$tmp/libs" >"$tmp/mvn.log" 2>&1; then
        cat "$tmp/mvn.log" >&2
        rm -rf "$tmp"
        die "maven could not fetch the broker"
    fi
    [ -f "$tmp/libs/kafka_2.13-$KAFKA_VERSION.jar" ] || { rm -rf "$tmp"; die "broker jar missing after fetch"; }
    rm -rf "$tmp/m2" "$tmp/mvn.log"
    echo "$KAFKA_VERSION" >"$tmp/.complete"
    if ! mv -T "$tmp" "$KAFKA_HOME" 2>/dev/null; then
        rm -rf "$tmp"  # someone else finished first
        [ -f "$KAFKA_HOME/.complete" ] || die "could not move jars into $KAFKA_HOME"
    fi
    log "fetched $(ls "$LIBS" | wc -l) jars ($(du -sh "$LIBS" | cut -f1)) in $((SECONDS - start)) s into $LIBS"
}

running_pid() {  # prints the broker's pid if our broker is running
    [ -f "$PID_FILE" ] || return 1
    local pid
    pid="$(cat "$PID_FILE" 2>/dev/null)" || return 1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
    # Guard against a recycled pid: it must be a JVM running kafka.Kafka with our config.
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "kafka.Kafka $CONFIG" || return 1
    echo "$pid"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

probe() {
    local py
    if py="$(find_python)"; then
        "$py" "$HERE/probe.py" "$BOOTSTRAP" "$@"
    else
        port_open "$PORT"
    fi
}

write_config() {
    cat >"$CONFIG" <<EOF
# Written by deploy/kafka/kafka.sh — regenerated on every start.
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$DATA_DIR
num.partitions=1
auto.create.topics.enable=true
# One node: every internal topic at replication factor 1 / min.isr 1, or the group,
# transaction and share coordinators never come up (a transactional producer hangs at start).
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
default.replication.factor=1
min.insync.replicas=1
# Tests join consumer groups constantly: no initial rebalance delay.
group.initial.rebalance.delay.ms=0
EOF
}

up() {
    mkdir -p "$RUN_DIR"
    exec 9>"$RUN_DIR/.lock"
    flock 9  # concurrent `up`s (e.g. pytest-xdist workers) start one broker; the broker
    # itself is started with fd 9 closed so that it does not hold the lock
    local pid
    if pid="$(running_pid)"; then
        if probe; then
            log "already running (pid $pid)"
            echo "$BOOTSTRAP"
            return 0
        fi
        log "pid $pid is running but not answering yet; waiting"
    else
        if port_open "$PORT"; then
            die "port $PORT is already taken by another process; set KAFKA_PORT"
        fi
        fetch
        local java
        java="$(find_java)"
        write_config
        if [ "${KAFKA_FRESH:-0}" = 1 ]; then
            # Tests ask for an empty broker: no topics or groups left from earlier runs.
            log "KAFKA_FRESH=1: starting from empty data"
            rm -rf "$DATA_DIR" "$RUN_DIR/cluster.id"
        fi
        mkdir -p "$DATA_DIR"
        local cluster_id
        cluster_id="$(cat "$RUN_DIR/cluster.id" 2>/dev/null || true)"
        if [ -z "$cluster_id" ]; then
            # A Kafka Uuid: 16 random bytes, base64url without padding, not starting with '-'.
            while :; do
                cluster_id="$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
                [ "${cluster_id:0:1}" != "-" ] && break
            done
            echo "$cluster_id" >"$RUN_DIR/cluster.id"
        fi
        local start=$SECONDS
        [ -f "$LOG_FILE" ] && mv -f "$LOG_FILE" "$LOG_FILE.1"  # keep one previous run's log
        # shellcheck disable=SC2086
        "$java" $HEAP -cp "$LIBS/*" \
            -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
            kafka.tools.StorageTool format -t "$cluster_id" -c "$CONFIG" --standalone \
            --ignore-formatted >>"$LOG_FILE" 2>&1 </dev/null ||
            { tail -n 30 "$LOG_FILE" >&2; die "storage format failed (log: $LOG_FILE)"; }
        log "starting Kafka $KAFKA_VERSION on $BOOTSTRAP (log: $LOG_FILE, data: $DATA_DIR)"
        # shellcheck disable=SC2086
        setsid nohup "$java" $HEAP -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
            -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
            -Dorg.slf4j.simpleLogger.defaultLogLevel=info \
            -Dorg.slf4j.simpleLogger.showDateTime=true \
            -Dorg.slf4j.simpleLogger.dateTimeFormat="yyyy-MM-dd HH:mm:ss.SSS" \
            -Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients=warn \
            -cp "$LIBS/*" kafka.Kafka "$CONFIG" >>"$LOG_FILE" 2>&1 </dev/null 9>&- &
        pid=$!
        echo "$pid" >"$PID_FILE"
    fi
    local deadline=$((SECONDS + START_TIMEOUT))
    until probe; do
        if ! kill -0 "$pid" 2>/dev/null; then
            tail -n 40 "$LOG_FILE" >&2
            rm -f "$PID_FILE"
            die "broker exited during start-up (log: $LOG_FILE)"
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            tail -n 40 "$LOG_FILE" >&2
            die "broker did not answer within $START_TIMEOUT s (still running as pid $pid; log: $LOG_FILE)"
        fi
        sleep 0.5
    done
    log "up (pid $pid) after $((SECONDS - ${start:-$SECONDS})) s"
    echo "$BOOTSTRAP"
}

down() {
    mkdir -p "$RUN_DIR"
    exec 9>"$RUN_DIR/.lock"
    flock 9
    local pid
    if ! pid="$(running_pid)"; then
        rm -f "$PID_FILE"
        log "not running"
        return 0
    fi
    log "stopping pid $pid"
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + STOP_TIMEOUT))
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            log "still running after $STOP_TIMEOUT s; SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
            sleep 0.5
            break
        fi
        sleep 0.2
    done
    rm -f "$PID_FILE"
    log "stopped"
}

status() {
    local pid
    if pid="$(running_pid)"; then
        if probe; then
            echo "running: pid $pid, bootstrap $BOOTSTRAP, Kafka $KAFKA_VERSION"
        else
            echo "starting: pid $pid, not answering on $BOOTSTRAP yet"
        fi
        return 0
    fi
    echo "not running"
    return 1
}

case "${1:-}" in
    fetch) fetch; echo "$LIBS" ;;
    up) up ;;
    down) down ;;
    status) status ;;
    versions) probe --versions ;;  # which transactional request versions the broker accepts
    *) echo "usage: $0 {fetch|up|down|status|versions}" >&2; exit 2 ;;
esac
