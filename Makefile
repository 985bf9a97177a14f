# Mahjong Planet — developer entry points. `make test` and `make run` work on a fresh clone:
# the first call creates .venv and installs the project with its development tools.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
SHARED ?= ../shared

.PHONY: test lint typecheck unit integration conformance bench load run schemas clean browser browser-deps client prometheus-deps

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

## test: lint, type-check, unit/property/scenario/service tests, conformance, then the
## integration tests against real Kafka and PostgreSQL (started by deploy/ scripts)
test: lint typecheck unit conformance client browser integration

lint: $(STAMP)
	$(PY) -m ruff check schemas services tests deploy
	$(PY) -m ruff format --check schemas services tests deploy

typecheck: $(STAMP)
	$(PY) -m mypy schemas services

unit: $(STAMP) prometheus-deps
	$(PY) -m pytest -n 2 -q --ignore=tests/integration --ignore=tests/browser

## prometheus-deps: Debian's prometheus and promtool (the alert rules' tests, the live alert
## test and `make cluster`), installed here when missing, like Chromium
prometheus-deps:
	@bash deploy/prometheus/prometheus.sh install

## client: unit tests of the web client's modules (the table state's pure update), with
## Node's built-in test runner; no packages, no build step
client:
	node --test tests/client/

## browser: the web client in headless Debian Chromium (Playwright for Python; its own browser
## download needs the internet, so Debian's package is used, installed here when missing)
CHROMIUM ?= /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

browser-deps:
	@if [ ! -x $(CHROMIUM) ] || ! fc-list 2>/dev/null | grep -qi wqy; then \
		echo "installing Debian's chromium and a CJK font for the browser tests"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium fonts-wqy-microhei >/dev/null; \
	fi

browser: $(STAMP) browser-deps
	$(PY) -m pytest -q tests/browser

# One process: these tests share one broker and one consumer group, as production does.
integration: $(STAMP) prometheus-deps
	$(PY) -m pytest -q tests/integration

conformance: $(STAMP)
	$(VENV)/bin/mahjong-planet scenario --check $(SHARED)/conformance/examples $(SHARED)/conformance/random tests/scenarios

## bench: speed figures (rules engine vs the `mahjong` package); writes bench-results.json and docs/benchmarks.md
bench: $(STAMP)
	$(PY) -m tests.bench.run --json bench-results.json --markdown docs/benchmarks.md

## soak: the soak with faults (issue 10): 30 minutes of rated, Quick Play and computer tables
## through the gateway while a random service is killed (-9) every minute, the broker and
## PostgreSQL restarted once each; then audit, seq, recompute and Quick Play checks. Its own
## broker (SOAK_KAFKA_PORT, 29092) and database (SOAK_PG_PORT, 25432); writes soak-results.json
.PHONY: soak
SOAK_MINUTES ?= 30
soak: $(STAMP)
	$(PY) -m tests.soak.soak --minutes $(SOAK_MINUTES) --kill-every 60 --json soak-results.json \
		--kafka-port $${SOAK_KAFKA_PORT:-29092} --pg-port $${SOAK_PG_PORT:-25432}

## load: the load test through the gateway (tests/bench/load.py): 100, 500 and 1,000 tables on
## the distributed mode, its own fresh broker and database; writes load-results.json
load: $(STAMP)
	$(PY) -m tests.bench.load

## schemas: regenerate the published JSON Schema files from the msgspec types
schemas: $(STAMP)
	$(VENV)/bin/mahjong-planet schemas --write

## run: the whole platform in one process (arrives with the table service and gateway)
run: $(STAMP)
	$(VENV)/bin/mahjong-planet run

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis

## kafka-up / kafka-down: Kafka on 127.0.0.1:19092 (KAFKA_PORT); jars from Maven Central, cached.
## One KRaft node by default; BROKERS=3: three nodes (each broker and controller) on 19092,
## 19094, 19096, every topic at replication factor 3 and min.insync.replicas 2
## db-up / db-down: PostgreSQL on 127.0.0.1:15432 (PG_PORT), database `mahjong`; see deploy/README.md
.PHONY: kafka-up kafka-down db-up db-down
# `make cluster BROKERS=3` remembers the count (cluster/kafka-brokers) for cluster-down/status.
BROKERS ?= $(shell cat cluster/kafka-brokers 2>/dev/null || echo 1)
KAFKA_SH := KAFKA_BROKERS=$(BROKERS) bash deploy/kafka/kafka.sh

kafka-up:
	$(KAFKA_SH) up

kafka-down:
	$(KAFKA_SH) down

db-up:
	bash deploy/postgres/postgres.sh up

db-down:
	bash deploy/postgres/postgres.sh down

## cluster: the distributed mode on this machine, without Docker: the broker, the database,
## the topics, and every service as its own process under deploy/cluster.py (logs in
## ./cluster/logs/<service>.log, pids in ./cluster/run/; a service that dies is restarted), and
## Prometheus scraping them all with deploy/prometheus/ (http://127.0.0.1:9090, alerts loaded).
## BROKERS=3: a replicated Kafka of three KRaft nodes instead of one (the services get all
## three addresses; `deploy/kafka/kafka.sh kill N` / `start N` crash and restart one).
## cluster-down: SIGTERM every service (by pid, then wait), then stop the brokers and database.
.PHONY: cluster cluster-down cluster-status
cluster: $(STAMP) prometheus-deps
	$(KAFKA_SH) up
	@mkdir -p cluster && echo $(BROKERS) >cluster/kafka-brokers
	bash deploy/postgres/postgres.sh up
	$(PY) deploy/cluster.py up --restart --kafka "$$($(KAFKA_SH) bootstrap)" \
		--postgres "$$(bash deploy/postgres/postgres.sh dsn)"
	bash deploy/prometheus/prometheus.sh up

cluster-status:
	$(PY) deploy/cluster.py status
	-$(KAFKA_SH) status
	bash deploy/prometheus/prometheus.sh status

cluster-down:
	bash deploy/prometheus/prometheus.sh down
	$(PY) deploy/cluster.py down
	$(KAFKA_SH) down
	@rm -f cluster/kafka-brokers
	bash deploy/postgres/postgres.sh down
