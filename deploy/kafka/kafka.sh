#!/usr/bin/env bash
# Apache Kafka (KRaft) for development and tests, without Docker: the broker's jars come from
# Maven Central and run on the local JDK. One node (broker+controller) by default; with
# KAFKA_BROKERS=3, a replicated cluster of three nodes on this machine, each both a broker and
# a controller (a static quorum of three voters), every topic at replication factor 3 and
# min.insync.replicas 2.
#
#   kafka.sh fetch      download the pinned broker + slf4j-simple into the cache (idempotent)
#   kafka.sh up         fetch, format storage, start every node that is not running in the
#                       background, wait until all answer; prints the bootstrap list
#   kafka.sh down       stop every node (SIGTERM, then SIGKILL after KAFKA_STOP_TIMEOUT s)
#   kafka.sh status     exit 0 if every node is running (and print where), 1 if not
#   kafka.sh bootstrap  print the bootstrap list (host:port of every node, comma-separated)
#   kafka.sh kill N     kill -9 node N (1..KAFKA_BROKERS), as a crash would; prints its pid
#   kafka.sh start N    start node N again (its data kept), wait until the cluster lists it
#   kafka.sh pid N      print node N's pid (exit 1 if it is not running)
#
# Environment (all optional):
#   KAFKA_BROKERS          number of nodes (default 1). Node N (1-based, its node.id) listens
#                          for clients on KAFKA_PORT + 2(N-1) and for the quorum on the next port
#   KAFKA_PORT             client listener of node 1 on 127.0.0.1 (default 19092)
#   KAFKA_CONTROLLER_PORT  one node only: its KRaft controller listener (default KAFKA_PORT+1)
#   KAFKA_DATA_DIR         one node only: log.dirs (default $KAFKA_RUN_DIR/data; with several
#                          nodes each has $KAFKA_RUN_DIR/node<N>/data)
#   KAFKA_FRESH=1          with `up` while no node runs: delete their data first
#   KAFKA_RUN_DIR          config, pid file, log file (default /tmp/mahjong-planet-kafka-$KAFKA_PORT;
#                          several nodes: /tmp/mahjong-planet-kafka-$KAFKA_PORT-x<N>, one node<i>/
#                          folder each, and the cluster id they share)
#   KAFKA_BROKER_SESSION_TIMEOUT_MS  several nodes: how long the controller waits for a silent
#                          broker before fencing it and moving its leaderships (default 6000;
#                          Kafka's own is 9000)
#   KAFKA_HEAP             JVM heap flags, per node (default "-Xms256m -Xmx512m")
#   KAFKA_START_TIMEOUT    seconds to wait for the nodes to answer (default 120)
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
BROKERS="${KAFKA_BROKERS:-1}"
case "$BROKERS" in
    '' | *[!0-9]* | 0) echo "kafka.sh: KAFKA_BROKERS must be a number >= 1" >&2; exit 2 ;;
esac
if [ "$BROKERS" = 1 ]; then
    RUN_DIR="${KAFKA_RUN_DIR:-/tmp/mahjong-planet-kafka-$PORT}"
else
    RUN_DIR="${KAFKA_RUN_DIR:-/tmp/mahjong-planet-kafka-$PORT-x$BROKERS}"
fi
# Internal and default topics: one copy per node, up to three; with three copies a write needs
# two of them (min.insync.replicas), so one node may die without a write refused or a
# committed record lost.
REPLICAS=$((BROKERS < 3 ? BROKERS : 3))
MIN_ISR=$((REPLICAS >= 3 ? 2 : 1))
HEAP="${KAFKA_HEAP:--Xms256m -Xmx512m}"
START_TIMEOUT="${KAFKA_START_TIMEOUT:-120}"
STOP_TIMEOUT="${KAFKA_STOP_TIMEOUT:-30}"
SESSION_TIMEOUT_MS="${KAFKA_BROKER_SESSION_TIMEOUT_MS:-6000}"

# Node N's files and ports. One node keeps the layout it always had (everything straight in
# RUN_DIR); several get a folder each.
node_dir() { if [ "$BROKERS" = 1 ]; then echo "$RUN_DIR"; else echo "$RUN_DIR/node$1"; fi; }
node_port() { echo $((PORT + 2 * ($1 - 1))); }
node_controller_port() {
    if [ "$BROKERS" = 1 ]; then
        echo "${KAFKA_CONTROLLER_PORT:-$((PORT + 1))}"
    else
        echo $((PORT + 2 * ($1 - 1) + 1))
    fi
}
node_data_dir() {
    if [ "$BROKERS" = 1 ]; then echo "${KAFKA_DATA_DIR:-$RUN_DIR/data}"; else echo "$RUN_DIR/node$1/data"; fi
}
pid_file() { echo "$(node_dir "$1")/kafka.pid"; }
log_file() { echo "$(node_dir "$1")/kafka.log"; }
config_file() { echo "$(node_dir "$1")/server.properties"; }
nodes() { seq 1 "$BROKERS"; }

join_nodes() {  # FORMAT: FORMAT with %n (node), %p (client port), %c (controller port), comma-joined
    local n out="" item
    for n in $(nodes); do
        item="${1//%n/$n}"
        item="${item//%p/$(node_port "$n")}"
        item="${item//%c/$(node_controller_port "$n")}"
        out="${out:+$out,}$item"
    done
    echo "$out"
}
BOOTSTRAP="$(join_nodes "127.0.0.1:%p")"

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


running_pid() {  # N: prints node N's pid if it is running
    local file pid
    file="$(pid_file "$1")"
    [ -f "$file" ] || return 1
    pid="$(cat "$file" 2>/dev/null)" || return 1
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
    # Guard against a recycled pid: it must be a JVM running kafka.Kafka with our config.
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "kafka.Kafka $(config_file "$1")" || return 1
    echo "$pid"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

probe() {  # N M [--versions]: node N answers and lists at least M unfenced brokers
    local n="$1" brokers="$2" py
    shift 2
    if py="$(find_python)"; then
        "$py" "$HERE/probe.py" "127.0.0.1:$(node_port "$n")" --brokers "$brokers" "$@"
    else
        port_open "$(node_port "$n")"
    fi
}

write_config() {  # N
    local n="$1" quorum
    if [ "$BROKERS" = 1 ]; then
        quorum="controller.quorum.bootstrap.servers=127.0.0.1:$(node_controller_port 1)"
    else
        # A static quorum: every node is a voter, known from the start.
        quorum="controller.quorum.voters=$(join_nodes "%n@127.0.0.1:%c")"
    fi
    cat >"$(config_file "$n")" <<EOF
# Written by deploy/kafka/kafka.sh — regenerated on every start.
process.roles=broker,controller
node.id=$n
$quorum
listeners=PLAINTEXT://127.0.0.1:$(node_port "$n"),CONTROLLER://127.0.0.1:$(node_controller_port "$n")
advertised.listeners=PLAINTEXT://127.0.0.1:$(node_port "$n")
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$(node_data_dir "$n")
num.partitions=1
auto.create.topics.enable=true
# Every internal topic at replication factor $REPLICAS / min.isr $MIN_ISR. (One node: 1 / 1, or
# the group, transaction and share coordinators never come up: a transactional producer
# hangs at start.)
offsets.topic.replication.factor=$REPLICAS
offsets.topic.num.partitions=$REPLICAS
transaction.state.log.replication.factor=$REPLICAS
transaction.state.log.min.isr=$MIN_ISR
transaction.state.log.num.partitions=$REPLICAS
share.coordinator.state.topic.replication.factor=$REPLICAS
share.coordinator.state.topic.min.isr=$MIN_ISR
default.replication.factor=$REPLICAS
min.insync.replicas=$MIN_ISR
# Tests join consumer groups constantly: no initial rebalance delay.
group.initial.rebalance.delay.ms=0
EOF
    if [ "$BROKERS" != 1 ]; then
        cat >>"$(config_file "$n")" <<EOF
# A node that stops heartbeating (kill -9) is fenced after this, and its leaderships move to
# in-sync followers: a failover's write stall is about this long.
broker.session.timeout.ms=$SESSION_TIMEOUT_MS
broker.heartbeat.interval.ms=$((SESSION_TIMEOUT_MS / 4))
EOF
    fi
}

cluster_id() {  # the one cluster id every node is formatted with, made once per RUN_DIR
    local id
    id="$(cat "$RUN_DIR/cluster.id" 2>/dev/null || true)"
    if [ -z "$id" ]; then
        # A Kafka Uuid: 16 random bytes, base64url without padding, not starting with '-'.
        while :; do
            id="$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
            [ "${id:0:1}" != "-" ] && break
        done
        echo "$id" >"$RUN_DIR/cluster.id"
    fi
    echo "$id"
}

format_node() {  # N: write node N's config and format its storage if it is new
    local n="$1" java logf
    logf="$(log_file "$n")"
    if port_open "$(node_port "$n")"; then
        die "port $(node_port "$n") is already taken by another process; set KAFKA_PORT"
    fi
    java="$(find_java)"
    mkdir -p "$(node_dir "$n")" "$(node_data_dir "$n")"
    write_config "$n"
    [ -f "$logf" ] && mv -f "$logf" "$logf.1"  # keep one previous run's log
    local format=(--standalone)
    [ "$BROKERS" = 1 ] || format=()  # several nodes: the voters in the config are the quorum
    # shellcheck disable=SC2086
    "$java" $HEAP -cp "$LIBS/*" \
        -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
        kafka.tools.StorageTool format -t "$(cluster_id)" -c "$(config_file "$n")" "${format[@]}" \
        --ignore-formatted >>"$logf" 2>&1 </dev/null ||
        { tail -n 30 "$logf" >&2; die "storage format failed (log: $logf)"; }
}

launch_node() {  # N: start node N (formatted) in the background
    local n="$1" java
    java="$(find_java)"
    log "starting Kafka $KAFKA_VERSION node $n on 127.0.0.1:$(node_port "$n") (log: $(log_file "$n"), data: $(node_data_dir "$n"))"
    # shellcheck disable=SC2086
    setsid nohup "$java" $HEAP -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
        -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
        -Dorg.slf4j.simpleLogger.defaultLogLevel=info \
        -Dorg.slf4j.simpleLogger.showDateTime=true \
        -Dorg.slf4j.simpleLogger.dateTimeFormat="yyyy-MM-dd HH:mm:ss.SSS" \
        -Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients=warn \
        -cp "$LIBS/*" kafka.Kafka "$(config_file "$n")" >>"$(log_file "$n")" 2>&1 </dev/null 9>&- &
    echo "$!" >"$(pid_file "$n")"
}

start_nodes() {  # N...: format them (at once: a JVM each) and start them
    local n jobs=() failed=0
    cluster_id >/dev/null  # made once, before the formats read it
    for n in "$@"; do
        format_node "$n" &
        jobs+=("$!")
    done
    for n in "${jobs[@]}"; do wait "$n" || failed=1; done
    [ "$failed" = 0 ] || die "could not format every node"
    for n in "$@"; do launch_node "$n"; done
}

wait_nodes() {  # N...: until each answers and lists every node as a broker; fail if one exits
    local deadline=$((SECONDS + START_TIMEOUT)) n pid
    for n in "$@"; do
        until probe "$n" "$BROKERS"; do
            if ! pid="$(running_pid "$n")"; then
                tail -n 40 "$(log_file "$n")" >&2
                rm -f "$(pid_file "$n")"
                die "node $n exited during start-up (log: $(log_file "$n"))"
            fi
            if [ "$SECONDS" -ge "$deadline" ]; then
                tail -n 40 "$(log_file "$n")" >&2
                die "node $n did not answer within $START_TIMEOUT s (still running as pid $pid; log: $(log_file "$n"))"
            fi
            sleep 0.5
        done
    done
}

lock() {
    mkdir -p "$RUN_DIR"
    exec 9>"$RUN_DIR/.lock"
    flock 9  # concurrent `up`s (e.g. pytest-xdist workers) start one cluster; the brokers
    # themselves are started with fd 9 closed so that they do not hold the lock
}

pids() {
    if [ "$BROKERS" = 1 ]; then
        echo "pid $(running_pid 1 || echo -)"
        return
    fi
    local n out=""
    for n in $(nodes); do out="${out:+$out, }node $n pid $(running_pid "$n" || echo -)"; done
    echo "$out"
}

up() {
    lock
    local n running=0 started=0 start=$SECONDS
    for n in $(nodes); do
        if running_pid "$n" >/dev/null; then running=$((running + 1)); fi
    done
    if [ "$running" = 0 ] && [ "${KAFKA_FRESH:-0}" = 1 ]; then
        # Tests ask for an empty cluster: no topics or groups left from earlier runs.
        log "KAFKA_FRESH=1: starting from empty data"
        for n in $(nodes); do rm -rf "$(node_data_dir "$n")"; done
        rm -f "$RUN_DIR/cluster.id"
    fi
    local missing=()
    for n in $(nodes); do
        if ! running_pid "$n" >/dev/null; then missing+=("$n"); fi
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        fetch
        start_nodes "${missing[@]}"
        started="${#missing[@]}"
    fi
    # Several nodes form their quorum only once a majority runs: start them all, then wait.
    # shellcheck disable=SC2046
    wait_nodes $(nodes)
    if [ "$started" = 0 ]; then
        log "already running ($(pids))"
    else
        log "up ($(pids)) after $((SECONDS - start)) s"
    fi
    echo "$BOOTSTRAP"
}

stop_nodes() {  # N...: SIGTERM them all at once, SIGKILL what is left after STOP_TIMEOUT
    local n pid alive=() left
    for n in "$@"; do
        if pid="$(running_pid "$n")"; then
            log "stopping node $n (pid $pid)"
            kill -TERM "$pid" 2>/dev/null || true
            alive+=("$pid")
        fi
    done
    if [ "${#alive[@]}" = 0 ]; then
        for n in "$@"; do rm -f "$(pid_file "$n")"; done
        log "not running"
        return 0
    fi
    # All at once: a node stopping after the others waits for a controller quorum that is no
    # longer there.
    local deadline=$((SECONDS + STOP_TIMEOUT))
    while :; do
        left=()
        for pid in "${alive[@]}"; do
            if kill -0 "$pid" 2>/dev/null; then left+=("$pid"); fi
        done
        [ "${#left[@]}" = 0 ] && break
        if [ "$SECONDS" -ge "$deadline" ]; then
            log "still running after $STOP_TIMEOUT s (pid ${left[*]}); SIGKILL"
            kill -KILL "${left[@]}" 2>/dev/null || true
            sleep 0.5
            break
        fi
        sleep 0.2
    done
    for n in "$@"; do rm -f "$(pid_file "$n")"; done
    log "stopped"
}

down() {
    lock
    # shellcheck disable=SC2046
    stop_nodes $(nodes)
}

status() {
    local n pid name all=0 any=1
    for n in $(nodes); do
        name="node $n: "
        [ "$BROKERS" = 1 ] && name=""
        if pid="$(running_pid "$n")"; then
            any=0
            if probe "$n" 1; then
                echo "${name}running: pid $pid, bootstrap 127.0.0.1:$(node_port "$n"), Kafka $KAFKA_VERSION"
            else
                echo "${name}starting: pid $pid, not answering on 127.0.0.1:$(node_port "$n") yet"
            fi
        else
            all=1
            echo "${name}not running"
        fi
    done
    if [ "$BROKERS" != 1 ] && [ "$any" = 0 ]; then
        echo "bootstrap $BOOTSTRAP; replication factor $REPLICAS, min.insync.replicas $MIN_ISR"
    fi
    return "$all"
}

node_arg() {  # N: N itself if it names a node, else exit
    case "${1:-}" in
        '' | *[!0-9]*) die "which node? 1..$BROKERS" ;;
    esac
    if [ "$1" -lt 1 ] || [ "$1" -gt "$BROKERS" ]; then die "no node $1 (KAFKA_BROKERS=$BROKERS)"; fi
    echo "$1"
}

kill_node() {  # N: kill -9, as a crash would; the other nodes carry on
    local n pid
    n="$(node_arg "$1")"
    lock
    pid="$(running_pid "$n")" || die "node $n is not running"
    log "kill -9 node $n (pid $pid)"
    kill -KILL "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    rm -f "$(pid_file "$n")"
    echo "$pid"
}

start_one() {  # N: start node N again and wait until it answers and lists every node
    local n start=$SECONDS
    n="$(node_arg "$1")"
    lock
    if running_pid "$n" >/dev/null; then
        log "node $n already running"
    else
        fetch
        start_nodes "$n"
    fi
    wait_nodes "$n"
    log "node $n up (pid $(running_pid "$n")) after $((SECONDS - start)) s"
    echo "$BOOTSTRAP"
}

case "${1:-}" in
    fetch) fetch; echo "$LIBS" ;;
    up) up ;;
    down) down ;;
    status) status ;;
    bootstrap) echo "$BOOTSTRAP" ;;
    kill) kill_node "${2:-}" ;;
    start) start_one "${2:-}" ;;
    pid) running_pid "$(node_arg "${2:-}")" ;;
    versions) probe 1 1 --versions ;;  # which transactional request versions the broker accepts
    *) echo "usage: $0 {fetch|up|down|status|bootstrap|kill N|start N|pid N|versions}" >&2; exit 2 ;;
esac
