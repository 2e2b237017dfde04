# cachelab — front door. `make help` lists every target.
#
# Conventions (kubebuilder style): every public target has a `## description` comment and
# sits under a `##@ Section` header; recipes delegate to scripts/ or the `cachelab` CLI.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

ROOT        := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
VENV        ?= $(ROOT)/.venv
PY          := $(VENV)/bin/python
CACHELAB    := $(VENV)/bin/cachelab
TOOLS_DIR   ?= $(ROOT)/.cache/tools
# JAVA_HOME of a JDK >= 21, found once per make invocation (scripts/find-jdk.sh explains a miss).
JDK_HOME     = $(shell $(ROOT)/scripts/find-jdk.sh)
MVN          = JAVA_HOME="$(JDK_HOME)" mvn -B -q -ntp
SPEC        ?= ops/experiments/quickstart.yaml
IMG_REGISTRY ?= ghcr.io/cachelab
IMG_TAG     ?= $(shell awk '/^appVersion:/ {gsub(/"/, "", $$2); print $$2}' $(ROOT)/charts/testbed/Chart.yaml)
K8S_CLUSTER ?= cachelab

MIDDLEWARE_JAR := middleware/target/middleware.jar
LOADGEN_JAR    := loadgen/target/loadgen.jar
JAVA_SOURCES   := pom.xml $(shell find middleware loadgen -path '*/target' -prune -o -type f \( -name '*.java' -o -name 'pom.xml' -o -path '*/src/main/resources/*' \) -print 2>/dev/null)

##@ General

.PHONY: help
help: ## Show this help (targets by section).
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} \
	  /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-20s\033[0m %s\n", $$1, $$2 } \
	  /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Setup

.PHONY: deps
deps: ## Install missing Debian packages (memcached, redis, nutcracker, memcaslap, etcd, prometheus).
	@scripts/install-debs.sh

.PHONY: k8s-tools
k8s-tools: ## Build helm, kwok, kwokctl, kube-apiserver/-controller-manager/-scheduler into TOOLS_DIR/bin (~10 min once).
	@TOOLS_DIR=$(TOOLS_DIR) scripts/k8s-tools.sh

.PHONY: jdk
jdk: ## Find a JDK >= 21 (prints its JAVA_HOME, or says how to get one).
	@scripts/find-jdk.sh

.PHONY: venv
venv: $(VENV)/.installed ## Create the Python venv (.venv) with the cachelab package and dev tools.
$(VENV)/.installed: ops/pyproject.toml
	@scripts/install-debs.sh python3-venv
	@[[ -x $(PY) ]] || python3 -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip
	@$(PY) -m pip install -q -e 'ops[dev,locust]'
	@touch $@

##@ Build

.PHONY: build
build: $(MIDDLEWARE_JAR) $(LOADGEN_JAR) ## Build middleware/target/middleware.jar and loadgen/target/loadgen.jar.
$(MIDDLEWARE_JAR) $(LOADGEN_JAR) &: $(JAVA_SOURCES)
	@echo "building jars with $(JDK_HOME)"
	@$(MVN) -DskipTests package
	@touch $(MIDDLEWARE_JAR) $(LOADGEN_JAR) 2>/dev/null || true

.PHONY: image
image: ## Build both images with jib and push them to IMG_REGISTRY (needs registry credentials).
	@$(MVN) -DskipTests package jib:build -Dimage.registry=$(IMG_REGISTRY) -Dimage.tag=$(IMG_TAG)

.PHONY: image-tar
image-tar: ## Build both images with jib as tarballs (middleware/target/jib-image.tar, loadgen/...).
	@$(MVN) -DskipTests package jib:buildTar -Dimage.registry=$(IMG_REGISTRY) -Dimage.tag=$(IMG_TAG)

.PHONY: clean
clean: ## Remove build outputs (keeps the venv and tool caches).
	@$(MVN) clean

##@ Run

.PHONY: run
run: deps venv build ## Run a local experiment (SPEC, default ops/experiments/quickstart.yaml) and build its report.
	@$(CACHELAB) run $(SPEC) --target local --report

##@ Kubernetes

.PHONY: k8s-up
k8s-up: k8s-tools ## Start a local kwok cluster (K8S_CLUSTER=cachelab) with node pools a1/a2/a4; prints its kubeconfig.
	@TOOLS_DIR=$(TOOLS_DIR) scripts/kwok-cluster.sh up $(K8S_CLUSTER)

.PHONY: k8s-down
k8s-down: ## Delete the local kwok cluster (K8S_CLUSTER=cachelab).
	@TOOLS_DIR=$(TOOLS_DIR) scripts/kwok-cluster.sh down $(K8S_CLUSTER)

##@ Test

.PHONY: test
test: deps venv k8s-tools build lint test-java test-python ## Run every test tier (unit, integration, end to end, Kubernetes).

.PHONY: lint
lint: venv ## Check formatting and types: spotless (google-java-format), ruff, mypy.
	@$(MVN) spotless:check
	@cd ops && $(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/mypy cachelab
	@$(VENV)/bin/ruff check --config ops/pyproject.toml loadgen/locust scripts/bench.py && $(VENV)/bin/ruff format --config ops/pyproject.toml --check loadgen/locust scripts/bench.py && $(VENV)/bin/mypy --config-file ops/pyproject.toml loadgen/locust/locustfile.py scripts/bench.py

.PHONY: fmt
fmt: venv ## Format Java (spotless) and Python (ruff) sources in place.
	@$(MVN) spotless:apply
	@cd ops && $(VENV)/bin/ruff format . && $(VENV)/bin/ruff check --fix .

.PHONY: test-java
test-java: deps ## Java unit and integration tests (real memcached/redis on loopback ports).
	@JAVA_HOME="$(JDK_HOME)" mvn -B -ntp verify

.PHONY: test-python
test-python: deps venv build ## Python tests: unit, integration, end to end (real processes).
	@cd ops && CACHELAB_ROOT=$(ROOT) TOOLS_DIR=$(TOOLS_DIR) $(PY) -m pytest -q

.PHONY: test-k8s
test-k8s: deps venv k8s-tools ## Kubernetes tier only: chart lint/schema, installs and Jobs on a throwaway kwok cluster.
	@cd ops && CACHELAB_ROOT=$(ROOT) TOOLS_DIR=$(TOOLS_DIR) $(PY) -m pytest -q -m k8s tests/k8s

##@ Benchmark

.PHONY: bench
bench: deps build ## Proxies (direct/twemproxy/middleware) and loadgen vs memcaslap: ops/s, latency, CPU/request.
	@JAVA_HOME="$(JDK_HOME)" python3 scripts/bench.py

##@ Monitoring

KPS_VERSION          ?= 67.8.0
MONITORING_NAMESPACE ?= monitoring

.PHONY: monitoring-install
monitoring-install: ## Install kube-prometheus-stack (pinned chart KPS_VERSION) with ops/monitoring values into the current cluster.
	@KPS_VERSION=$(KPS_VERSION) MONITORING_NAMESPACE=$(MONITORING_NAMESPACE) scripts/monitoring-install.sh

.PHONY: grafana
grafana: ## Open Grafana of kube-prometheus-stack on http://127.0.0.1:3000 (kubectl port-forward).
	@kubectl -n $(MONITORING_NAMESPACE) port-forward svc/kps-grafana 3000:80

.PHONY: dashboards
dashboards: venv ## Regenerate the Grafana dashboards in charts/testbed/dashboards from ops/cachelab/dashboards.py.
	@$(PY) -m cachelab.dashboards charts/testbed/dashboards
