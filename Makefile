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
# The per-machine cache every clone shares (scripts/cache-dir.sh): Kubernetes tools and images.
CACHELAB_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/cachelab
TOOLS_DIR   ?= $(CACHELAB_CACHE)/tools
IMAGES_DIR  ?= $(CACHELAB_CACHE)/images
export CACHELAB_CACHE TOOLS_DIR IMAGES_DIR
# The tools k8s-tools builds (helm, kubectl where the machine has none) come first on PATH.
export PATH := $(TOOLS_DIR)/bin:$(PATH)
# Groups of scripts/k8s-tools.sh a target needs (control, cluster, netpol, cilium); empty: all it builds.
K8S_TOOLS   ?=
# JAVA_HOME of a JDK >= 21, found once per make invocation (scripts/find-jdk.sh explains a miss).
JDK_HOME     = $(shell $(ROOT)/scripts/find-jdk.sh)
# MAVEN_OPTS silences the JDK's sun.misc.Unsafe warnings about Maven itself (scripts/maven-opts.sh).
MVN_ENV      = JAVA_HOME="$(JDK_HOME)" MAVEN_OPTS="$(shell JAVA_HOME="$(JDK_HOME)" $(ROOT)/scripts/maven-opts.sh)"
MVN          = $(MVN_ENV) mvn -B -q -ntp -Dstyle.color=never
PYTEST       = cd ops && CACHELAB_ROOT=$(ROOT) $(PY) -m pytest -q
SPEC        ?= ops/experiments/quickstart.yaml
IMG_REGISTRY ?= ghcr.io/cachelab
IMG_TAG     ?= $(shell awk '/^appVersion:/ {gsub(/"/, "", $$2); print $$2}' $(ROOT)/charts/testbed/Chart.yaml)
K8S_CLUSTER ?= cachelab
# CILIUM=1: build Cilium (k8s-tools), start the one-node local cluster with it enforcing
# NetworkPolicies (k8s-up) and run its policy tests (test-k8s-cilium, part of `make test`). Off by
# default: its first build takes 15-25 min.
CILIUM      ?= 0
export CILIUM
# NetworkPolicy enforcement of k8s-up (CLUSTER_NETWORK_POLICY of scripts/local-cluster.sh):
# kube-router (every node; the multi-node default), none, or cilium (CILIUM=1, one node); empty:
# the script's default for the layout.
NETWORK_POLICY ?= $(if $(filter 1,$(CILIUM)),cilium)
# The local cluster of k8s-up (scripts/local-cluster.sh): NODES is pool:count (default the ASL 2017
# §3 shape, 3 x a1, 1 x a4, 3 x a2: three client machines, so every shipped overlay fits) or 1
# for one node (CILIUM=1 enforces policies there); SCALE the factor of the
# pools' Azure sizes (auto: the largest that fits this machine); PROFILE the bandwidth of the
# nodes' links (asl2017, asl2019, azure-v2, off).
ASL2017_NODES := a1:3,a4:1,a2:3
NODES       ?= $(if $(filter 1,$(CILIUM)),1,$(ASL2017_NODES))
SCALE       ?= auto
PROFILE     ?= asl2017

MIDDLEWARE_JAR := middleware/target/middleware.jar
LOADGEN_JAR    := loadgen/target/loadgen.jar
JAVA_SOURCES   := pom.xml $(shell find middleware loadgen -path '*/target' -prune -o -type f \( -name '*.java' -o -name 'pom.xml' -o -path '*/src/main/resources/*' \) -print 2>/dev/null)

##@ General

.PHONY: help
help: ## Show this help (targets by section; coloured on a terminal only).
	@if [[ -t 1 ]]; then c='\033[36m' b='\033[1m' r='\033[0m'; else c='' b='' r=''; fi; \
	awk -v c="$$c" -v b="$$b" -v r="$$r" 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make %s<target>%s\n", c, r} \
	  /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %s%-20s%s %s\n", c, $$1, r, $$2 } \
	  /^##@/ { printf "\n%s%s%s\n", b, substr($$0, 5), r }' $(MAKEFILE_LIST)

##@ Setup

.PHONY: deps
deps: ## Install the missing Debian packages of a local run (memcached, redis, python3-venv, maven); nothing else.
	@scripts/install-debs.sh run

.PHONY: deps-test
deps-test: deps ## Install the missing Debian packages of the local test tiers (peers, gcc, prometheus and exporters, chromium).
	@scripts/install-debs.sh test

.PHONY: deps-k8s
deps-k8s: deps ## Install the missing Debian packages of the Kubernetes tiers and k8s-up (etcd, containerd, runc, CNI plugins, conntrack, umoci, skopeo, docker-registry, collectd-core; CILIUM=1: clang/llvm 19).
	@scripts/install-debs.sh k8s $(if $(filter 1,$(CILIUM)),cilium)

.PHONY: check-installs
check-installs: ## Fail naming any command the scripts call that nothing in the project installs (first step of make test).
	@cd ops && python3 -m cachelab.devtools.install_check $(ROOT)

.PHONY: k8s-tools
k8s-tools: ## Build the Kubernetes tools from Go modules into TOOLS_DIR/bin, shared by every clone (K8S_TOOLS: control, cluster, netpol, cilium; default control cluster netpol, + cilium with CILIUM=1).
	@scripts/k8s-tools.sh $(K8S_TOOLS)

.PHONY: toxiproxy
toxiproxy: ## Build toxiproxy-server, the latency emulator of runs with `network:` RTTs (locally, and in the chart's sidecar image), into the per-machine tool cache (~1 min once; needs Go).
	@scripts/toxiproxy.sh

.PHONY: jdk
jdk: ## Find a JDK >= 21 (prints its JAVA_HOME, or says how to get one).
	@scripts/find-jdk.sh

.PHONY: venv
venv: $(VENV)/.installed ## Create the Python venv (.venv) with the cachelab package and dev tools.
$(VENV)/.installed: ops/pyproject.toml
	@scripts/install-debs.sh python3-venv
	@[[ -x $(PY) ]] || { echo "venv: creating $(VENV)"; python3 -m venv $(VENV); }
	@echo "venv: installing cachelab (editable) with pandas, matplotlib, locust, pytest, ruff, mypy (1-3 min once)"
	@$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	@PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip install -q --disable-pip-version-check -e 'ops[dev,locust]'
	@touch $@
	@echo "venv: ready ($(CACHELAB))"

##@ Build

.PHONY: build
build: $(MIDDLEWARE_JAR) $(LOADGEN_JAR) ## Build middleware/target/middleware.jar and loadgen/target/loadgen.jar.
$(MIDDLEWARE_JAR) $(LOADGEN_JAR) &: $(JAVA_SOURCES)
	@echo "build: middleware.jar and loadgen.jar with $(JDK_HOME) (maven, ~1-2 min; quiet unless it fails)"
	@$(MVN) -DskipTests package
	@touch $(MIDDLEWARE_JAR) $(LOADGEN_JAR) 2>/dev/null || true

.PHONY: push
push: ## Push the project's images to REGISTRY (host[:port][/path], e.g. <acr>.azurecr.io/cachelab; chart value global.imageRegistry): middleware and loadgen by jib, tagged appVersion and the short commit; toxiproxy, the memcached exporter and locust when make images built them. http only for a registry on this machine.
	@REGISTRY="$(REGISTRY)" JAVA_HOME="$(JDK_HOME)" scripts/push.sh

.PHONY: image
image: ## The same as push, to IMG_REGISTRY (default ghcr.io/cachelab).
	@REGISTRY="$(IMG_REGISTRY)" JAVA_HOME="$(JDK_HOME)" scripts/push.sh

.PHONY: image-tar
image-tar: ## Build both images with jib as tarballs (middleware/target/jib-image.tar, loadgen/...).
	@$(MVN) -DskipTests package jib:buildTar -Dimage.registry=$(IMG_REGISTRY) -Dimage.tag=$(IMG_TAG)

.PHONY: clean
clean: ## Remove build outputs (keeps the venv and tool caches).
	@$(MVN) clean

##@ Run

.PHONY: run
run: deps venv build ## Run a local experiment (SPEC, default ops/experiments/quickstart.yaml) and build its report.
	@test -n "$(SPEC)" || { echo "usage: make run [SPEC=ops/experiments/<name>.yaml] (default quickstart; cachelab list shows them)" >&2; exit 2; }
	@$(CACHELAB) run "$(SPEC)" --target local --report

.PHONY: report-shot
report-shot: venv ## Rebuild RESULTS's report and screenshot the whole page with headless Chromium (RESULTS=<results folder>; installs chromium).
	@test -n "$(RESULTS)" || { echo "usage: make report-shot RESULTS=results/<experiment>/<stamp>" >&2; exit 2; }
	@scripts/install-debs.sh chromium
	@$(CACHELAB) report $(RESULTS)
	@$(PY) -m cachelab.report.screenshot $(RESULTS)/report/index.html $(RESULTS)/report/screenshot.png

##@ Kubernetes

.PHONY: k8s-up
k8s-up: deps-k8s k8s-tools images ## Start a real cluster on this machine (root; state in .cache/cluster): nodes NODES (default a1:3,a4:1,a2:3; 1: one node) at SCALE, links at PROFILE; NetworkPolicies enforced on every node by kube-router (NETWORK_POLICY=none: off; CILIUM=1: one node with Cilium); every image pushed to its registry (10.244.0.1:5100), which the nodes pull from; last line: export KUBECONFIG=...
	@CLUSTER_NETWORK_POLICY=$(NETWORK_POLICY) \
	  CLUSTER_NODES=$(NODES) CLUSTER_SCALE=$(SCALE) CLUSTER_PROFILE=$(PROFILE) scripts/local-cluster.sh up >&2
	@REGISTRY="$$(scripts/local-cluster.sh registry)" JAVA_HOME="$(JDK_HOME)" scripts/images.sh push >&2
	@echo "export KUBECONFIG=$(ROOT)/.cache/cluster/kubeconfig"

.PHONY: k8s-down
k8s-down: ## Stop the local cluster and restore the machine (bridge, veths, netns, cgroups, qdiscs, iptables chains, ipsets, sysctls, mounts).
	@scripts/local-cluster.sh down

.PHONY: undo
undo: ## Undo what the project set up on this machine (root): this clone's local and kwok clusters (k8s-down restores bridge, namespaces, cgroups, iptables, sysctls, mounts), a shaping a killed run left on lo; PACKAGES=1: the Debian packages it installed (recorded; none you had); CACHES=1: the tool and image caches, .cache, .venv; DRY_RUN=1: only print.
	@scripts/undo.sh $(if $(DRY_RUN),--dry-run) $(if $(PACKAGES),--packages) $(if $(CACHES),--caches)

.PHONY: images
images: deps-k8s k8s-tools ## Build every image locally into IMAGES_DIR, shared by every clone (jib on a jlinked base; servers, exporters, prometheus from Debian packages; locust from Debian python3 and PyPI; the operator and its Prometheus from Go modules; toxiproxy, the links' RTT sidecar, from make toxiproxy).
	@JAVA_HOME="$(JDK_HOME)" scripts/images.sh build

.PHONY: kwok-up
kwok-up: deps-k8s k8s-tools ## Start a kwok cluster (K8S_CLUSTER=cachelab) with simulated node pools a1/a2/a4 (placement); prints its kubeconfig.
	@scripts/kwok-cluster.sh up $(K8S_CLUSTER)

.PHONY: kwok-down
kwok-down: ## Delete the kwok cluster (K8S_CLUSTER=cachelab).
	@scripts/kwok-cluster.sh down $(K8S_CLUSTER)

##@ Test

.PHONY: test
test: ## Run every test tier (what CI runs; root): install check, lint, unit, integration, end to end, Kubernetes (kwok, a real local cluster; CILIUM=1 its NetworkPolicy tests), tools built in the background; prints each part's wall time.
	@scripts/test-all.sh

.PHONY: lint
lint: venv ## Check formatting and types (spotless, ruff, mypy) and the prose (no words about how it was made, no links out).
	@$(MVN) spotless:check
	@cd ops && $(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/mypy cachelab
	@$(VENV)/bin/ruff check --config ops/pyproject.toml loadgen/locust scripts/bench scripts/local-cluster && $(VENV)/bin/ruff format --config ops/pyproject.toml --check loadgen/locust scripts/bench scripts/local-cluster && $(VENV)/bin/mypy --config-file ops/pyproject.toml loadgen/locust/locustfile.py scripts/bench scripts/local-cluster/layout.py
	@cd ops && $(PY) -m cachelab.devtools.prose_lint $(ROOT)

.PHONY: fmt
fmt: venv ## Format Java (spotless) and Python (ruff) sources in place.
	@$(MVN) spotless:apply
	@cd ops && $(VENV)/bin/ruff format . && $(VENV)/bin/ruff check --fix .

.PHONY: test-unit
test-unit: venv ## Fast tier (< 2 min warm): Java unit tests (*Test) and Python tests without processes.
	@echo "test-unit: Java *Test (surefire)"
	@$(MVN) test
	@echo "test-unit: Python (not integration/e2e/k8s/k8s_real/monitor/report)"
	@$(PYTEST) -m "not integration and not e2e and not k8s and not k8s_real and not monitor and not report"

.PHONY: test-integration
test-integration: deps-test venv build ## Real processes on loopback: Java *IT (failsafe) and Python integration tests.
	@echo "test-integration: Java *IT (failsafe; real memcached/redis on loopback ports)"
	@$(MVN_ENV) mvn -B -ntp -DskipUnitTests=true verify
	@echo "test-integration: Python (integration and whole reports, not k8s; chromium for make report-shot's test)"
	@$(PYTEST) -m "(integration or report) and not e2e and not k8s"

.PHONY: test-e2e
test-e2e: deps-test venv build ## Whole local experiments through the runner (cachelab run, resume, shaping, monitor, the tutorial's first part).
	@$(PYTEST) -m "e2e"

.PHONY: test-k8s
test-k8s: K8S_TOOLS = control
test-k8s: deps-k8s venv k8s-tools build ## Kubernetes tier: chart lint/schema, installs and Jobs on a throwaway kwok cluster.
	@$(PYTEST) -m "k8s and not e2e"

.PHONY: test-k8s-real
test-k8s-real: K8S_TOOLS = control cluster netpol
test-k8s-real: deps-k8s venv k8s-tools images ## Real local cluster (root): helm install --wait, round trip, helm test, NetworkPolicies enforced across the nodes (kube-router), bandwidth, Prometheus, the Prometheus Operator and dashboards, a 2-point k8s run, the tutorial's cluster part; always torn down.
	@$(PYTEST) -m "k8s_real and not cilium"

.PHONY: test-k8s-cilium
test-k8s-cilium: K8S_TOOLS = control cluster cilium
test-k8s-cilium: CILIUM = 1
test-k8s-cilium: deps-k8s venv k8s-tools images ## One-node real local cluster with Cilium (root; builds Cilium, 15-25 min once): the chart's NetworkPolicies enforced, the failed starts.
	@$(PYTEST) -m "k8s_real and cilium"

# Tries per mode of `make soak` (CI's integration tier runs 100).
SOAK_TRIES  ?= 2000

.PHONY: soak
soak: deps ## Client isolation soak: ClientIsolationPropertyIT's generated pipelines of four clients, each reply checked against a memcached of the client's own, SOAK_TRIES tries in each of the three modes (default 2000, 3-4 min on 2 cores); a failure prints its shrunk requests.
	@$(MVN) -pl middleware -am verify -DskipUnitTests=true -Dit.test=ClientIsolationPropertyIT -Dfailsafe.failIfNoSpecifiedTests=false -Dcachelab.property.tries=$(SOAK_TRIES)

##@ Benchmark

.PHONY: deps-bench
deps-bench: deps ## Install the missing Debian packages of make bench (twemproxy, memcaslap, gcc).
	@scripts/install-debs.sh bench

.PHONY: bench
bench: deps-bench build ## Proxies (direct/twemproxy/ASL floor in C/middleware) for memcached (loadgen, memcaslap loads) and redis (redis-benchmark, with and without -P 16): ops/s, CPU/request, the latency each proxy adds in open loop at 10/50/70 % of saturation, targets side by side (over an hour at its defaults; BENCH_QUICK=1: shorter runs, fewer rounds).
	@JAVA_HOME="$(JDK_HOME)" python3 scripts/bench

##@ Monitoring

KPS_VERSION          ?= 67.8.0
MONITORING_NAMESPACE ?= monitoring
MONITORING_MANIFESTS ?= manifests/monitoring

.PHONY: monitoring-install
monitoring-install: ## Install kube-prometheus-stack (pinned chart KPS_VERSION) with ops/monitoring values into the current cluster.
	@KPS_VERSION=$(KPS_VERSION) MONITORING_NAMESPACE=$(MONITORING_NAMESPACE) scripts/monitoring-install.sh

.PHONY: monitoring-operator-install
monitoring-operator-install: ## The Prometheus Operator built here (k8s-tools, images): its CRDs, then MONITORING_MANIFESTS (manifests/monitoring: a Prometheus selecting `release: kps` monitors, node exporter, cAdvisor; manifests/monitoring-local on `make k8s-up`'s nodes).
	@[[ -d $(TOOLS_DIR)/prometheus-operator-crd ]] || { echo "error: $(TOOLS_DIR)/prometheus-operator-crd is missing: run make k8s-tools" >&2; exit 1; }
	@kubectl apply --server-side -f $(TOOLS_DIR)/prometheus-operator-crd
	@kubectl wait --for=condition=Established --timeout=60s -f $(TOOLS_DIR)/prometheus-operator-crd
	@kubectl apply -k $(MONITORING_MANIFESTS)

.PHONY: monitoring-check
monitoring-check: venv ## List the ServiceMonitors, PodMonitors and PrometheusRules that no Prometheus of the cluster selects (exit 1 if any).
	@$(PY) -m cachelab.k8s.monitors

.PHONY: grafana
grafana: ## Open Grafana of kube-prometheus-stack on http://127.0.0.1:3000 (kubectl port-forward).
	@kubectl -n $(MONITORING_NAMESPACE) port-forward svc/kps-grafana 3000:80

.PHONY: overlays
overlays: venv ## Render every manifests/overlays/* again from its spec (the `cachelab render` command in its header).
	@for k in manifests/overlays/*/kustomization.yaml; do \
	  args="$$(sed -n 's/^# Rendered by: cachelab render //p' "$$k")"; \
	  [[ -n $$args ]] || { echo "error: $$k has no render command in its header" >&2; exit 1; }; \
	  eval "$(CACHELAB) render $$args"; \
	done

.PHONY: options
options: venv ## Export the middleware's and the loadgen's flags (ops/cachelab/schemas/*-options.json) from their picocli models and render the docs' flag tables from them.
	@$(MVN) -pl middleware,loadgen -am test -Dtest='OptionsDescriptionTest' -Dsurefire.failIfNoSpecifiedTests=false -Dcachelab.options.write=true
	@cd ops && $(PY) -m cachelab.program_options $(ROOT)

.PHONY: dashboards
dashboards: venv ## Regenerate the Grafana dashboards in charts/testbed/dashboards from ops/cachelab/dashboards.py.
	@$(PY) -m cachelab.dashboards charts/testbed/dashboards
