# ray-operator build, test and run targets. Tools are installed with `go install`
# at pinned versions into a cache outside the work tree, so a fresh clone
# builds everything it needs and a second run reuses it.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

CACHE ?= $(or $(RAY_OPERATOR_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ray-operator)
export RAY_OPERATOR_CACHE := $(CACHE)

CONTROLLER_GEN_VERSION ?= v0.23.0
# k8s.io/code-generator builds the typed client in pkg/client; keep it at the
# version of the k8s.io/* modules in go.mod, whose client-go the generated
# code calls.
CODE_GENERATOR_VERSION ?= v0.37.2
# kube-openapi's openapi-gen writes the OpenAPI schema the apply
# configurations embed; the version code-generator's go.mod requires.
KUBE_OPENAPI_VERSION ?= v0.0.0-20260721132016-d427ff9ee9ad

define NEWLINE


endef
GOLANGCI_LINT_VERSION ?= v2.15.0
KWOK_VERSION ?= v0.8.0
COREDNS_VERSION ?= v1.15.0
METRICS_SERVER_VERSION ?= v0.9.0
# cert-manager's controller loops, built from hack/cert-manager-controller (its go.mod pins the same version).
CERT_MANAGER_VERSION ?= v1.21.2
# Kueue's controller manager, built from hack/kueue (its go.mod pins the same version).
KUEUE_VERSION ?= v0.17.0
# Traefik (the local cluster's Gateway API implementation), built from hack/traefik (its go.mod pins the same version).
TRAEFIK_VERSION ?= v3.6.12
HELM_VERSION ?= v3.22.0
# gotestsum runs the test stages' go test: go test's own output, plus the
# JSON of every event per run: the timing report reads it for the slowest
# tests, and it keeps each test's output when a run is stopped (SIGTERM, a
# package's -timeout) before go test printed it.
GOTESTSUM_VERSION ?= v1.13.0

# hack/timings.sh records where `make test`'s time goes (stages, tools built
# on first use, go test packages) when RAY_OPERATOR_TIMINGS names a record;
# `make test` sets it and prints the record at the end.
TIMINGS := $(CURDIR)/hack/timings.sh
TIMED_TOOL = $(TIMINGS) run tool $(notdir $@) --
GOTEST_TIMES := 2>&1 | $(TIMINGS) gotest
# GO_TEST runs go test under gotestsum (go test's own output), writing
# every JSON event, each test's output lines included, to
# .cache/test-json/<target>.json as it comes; $(call GO_TEST,NAME) names the
# file when a target runs go test twice.
TEST_JSON := $(CURDIR)/.cache/test-json
GO_TEST = $(GOTESTSUM) --format standard-quiet --jsonfile $(TEST_JSON)/$@$(if $(1),-$(1)).json --
GO_TEST_TOOLS := $(GOTESTSUM) | $(TEST_JSON)
$(TEST_JSON):
	mkdir -p $@

TOOLS := $(CACHE)/tools
CONTROLLER_GEN := $(TOOLS)/controller-gen-$(CONTROLLER_GEN_VERSION)
# A directory holding client-gen, lister-gen, informer-gen and
# applyconfiguration-gen, all of one version.
CODE_GENERATOR := $(TOOLS)/code-generator-$(CODE_GENERATOR_VERSION)
CODE_GENERATOR_CMDS := client-gen lister-gen informer-gen applyconfiguration-gen
OPENAPI_GEN := $(TOOLS)/openapi-gen-$(KUBE_OPENAPI_VERSION)
GOLANGCI_LINT := $(TOOLS)/golangci-lint-$(GOLANGCI_LINT_VERSION)
KWOK := $(TOOLS)/kwok-$(KWOK_VERSION)
COREDNS := $(TOOLS)/coredns-$(COREDNS_VERSION)
METRICS_SERVER := $(TOOLS)/metrics-server-$(METRICS_SERVER_VERSION)
# The tools built from a module of hack/ are named for the content of the
# files they are built from, not compared by time: a fresh clone's files are
# all newer than the cache, which rebuilt (relinked) each of them on every
# CI run.
# The name without the hash links to the newest build: ray-local finds
# its add-ons there when no RAY_OPERATOR_* variable names them.
source_hash = $(shell cat $(1) | sha256sum | cut -c1-12)
LINK_VERSIONED = ln -sfn $(notdir $@) $(patsubst %-$(lastword $(subst -, ,$(notdir $@))),%,$@)
CERT_MANAGER := $(TOOLS)/cert-manager-controller-$(CERT_MANAGER_VERSION)-$(call source_hash,hack/cert-manager-controller/main.go hack/cert-manager-controller/go.mod hack/cert-manager-controller/go.sum)
KUEUE := $(TOOLS)/kueue-$(KUEUE_VERSION)-$(call source_hash,hack/kueue/go.mod hack/kueue/go.sum)
TRAEFIK := $(TOOLS)/traefik-$(TRAEFIK_VERSION)-$(call source_hash,hack/traefik/go.mod hack/traefik/go.sum)
HELM := $(TOOLS)/helm-$(HELM_VERSION)
GOTESTSUM := $(TOOLS)/gotestsum-$(GOTESTSUM_VERSION)

.PHONY: all
all: build

# VERSION is the version the binaries report (--version, the
# ray_operator_build_info metric) and record on the objects they create
# (ray.io/kuberay-version, RAY_USAGE_STATS_EXTRA_TAGS): `git describe` of the
# checkout, or "dev" outside one.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/ray-operator/ray-operator/internal/buildinfo.version=$(VERSION)

# The two product modules: the operator (this directory) and the local
# cluster `make run` starts (local/, its own go.mod, which requires the
# operator's through a replace). Targets that lint or test run in both; the
# README's Layout lists the other modules (test/monitoring, hack/image and
# the tool modules under hack/).
LOCAL_MODULE := local

.PHONY: build
build: ## Build bin/ray-operator and bin/ray-local (the local module's), stamped with VERSION.
	go build -buildvcs=auto -ldflags "$(LDFLAGS)" -o bin/ray-operator ./cmd/ray-operator
	cd $(LOCAL_MODULE) && go build -buildvcs=auto -ldflags "$(LDFLAGS)" -o ../bin/ray-local ./cmd/ray-local

##@ Image

# `make image` builds the operator's OCI image without a container engine
# (hack/image, go-containerregistry as a library): a static binary (cgo off,
# -trimpath, stamped with LDFLAGS as `make build` stamps it) at /ray-operator
# (and /manager, the path KubeRay's chart runs), user 65532, the Mozilla CA
# roots of golang.org/x/crypto/x509roots/fallback (pinned in hack/image's
# go.sum), an index of IMAGE_PLATFORMS. Every file and the config carry
# SOURCE_DATE_EPOCH (the commit's time), so two builds of one commit give
# the same digest. Outputs in IMAGE_OUT: oci/ (an OCI layout, the index
# tagged IMAGE) and ray-operator.tar (`docker load`: the image of
# IMAGE_TARBALL_PLATFORM, this machine's by default); the index digest is
# the last line printed.
IMAGE_REPOSITORY ?= ghcr.io/ray-operator/ray-operator
IMG ?= $(IMAGE_REPOSITORY):$(VERSION)
IMAGE ?= $(IMG)
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
IMAGE_TARBALL_PLATFORM ?= linux/$(shell go env GOARCH)
IMAGE_OUT ?= bin/image
IMAGE_SOURCE ?= https://github.com/ray-operator/ray-operator
IMAGE_REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
# PUSH_INSECURE=true lets `make push` reach IMAGE's registry over plain
# HTTP (one at localhost, a loopback, a .local name or an RFC 1918 address
# is reached so anyway, go-containerregistry's rule).
PUSH_INSECURE ?= false
# The builder is a module of its own: go-containerregistry (and the docker
# CLI's config code its keychain reads) stays out of the operator's go.mod.
IMAGE_MODULE := hack/image
IMAGE_TOOL := $(TOOLS)/image-$(call source_hash,$(filter-out %_test.go,$(wildcard $(IMAGE_MODULE)/*.go)) $(IMAGE_MODULE)/go.mod $(IMAGE_MODULE)/go.sum)

$(IMAGE_TOOL):
	mkdir -p $(TOOLS) && cd $(IMAGE_MODULE) && $(TIMED_TOOL) go build -o $@.tmp . && mv $@.tmp $@

.PHONY: image
image: $(IMAGE_TOOL) ## Build the operator's OCI image (IMAGE, default ghcr.io/ray-operator/ray-operator:VERSION; IMAGE_PLATFORMS linux/amd64,linux/arm64) into IMAGE_OUT (bin/image): oci/ (OCI layout) and ray-operator.tar (docker load, IMAGE_TARBALL_PLATFORM); prints the index digest last.
	$(IMAGE_TOOL) build -dir . -package ./cmd/ray-operator -ldflags "$(LDFLAGS)" \
		-version "$(VERSION)" -revision "$(IMAGE_REVISION)" -source "$(IMAGE_SOURCE)" -source-date-epoch "$(SOURCE_DATE_EPOCH)" \
		-binary-path /ray-operator -links /manager -platforms "$(IMAGE_PLATFORMS)" \
		-image "$(IMAGE)" -layout $(IMAGE_OUT)/oci -tarball $(IMAGE_OUT)/ray-operator.tar -tarball-platform "$(IMAGE_TARBALL_PLATFORM)"

.PHONY: push
push: image ## Build the image and push its index to IMAGE (any registry; `docker login` credentials; PUSH_INSECURE=true for plain HTTP).
	$(IMAGE_TOOL) push -layout $(IMAGE_OUT)/oci $(if $(filter true,$(PUSH_INSECURE)),-insecure) "$(IMAGE)"

##@ Tools

# The tools are linked without a symbol table and DWARF (-s -w: their panics
# still print stack traces): on this 2-core machine that took kube-controller-
# manager's link from 20.7 s to 8.0 s, which a new machine pays for each of
# about twenty tools.
TOOL_LDFLAGS := -s -w

$(CONTROLLER_GEN):
	mkdir -p $(TOOLS)/tmp-cg && $(TIMED_TOOL) env GOBIN=$(TOOLS)/tmp-cg go install -ldflags="$(TOOL_LDFLAGS)" sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(TOOLS)/tmp-cg/controller-gen $@ && rmdir $(TOOLS)/tmp-cg

$(CODE_GENERATOR):
	rm -rf $(TOOLS)/tmp-codegen && mkdir -p $(TOOLS)/tmp-codegen
	$(TIMED_TOOL) env GOBIN=$(TOOLS)/tmp-codegen go install -ldflags="$(TOOL_LDFLAGS)" $(foreach c,$(CODE_GENERATOR_CMDS),k8s.io/code-generator/cmd/$(c)@$(CODE_GENERATOR_VERSION))
	mv $(TOOLS)/tmp-codegen $@

$(OPENAPI_GEN):
	mkdir -p $(TOOLS)/tmp-oag && $(TIMED_TOOL) env GOBIN=$(TOOLS)/tmp-oag go install -ldflags="$(TOOL_LDFLAGS)" k8s.io/kube-openapi/cmd/openapi-gen@$(KUBE_OPENAPI_VERSION)
	mv $(TOOLS)/tmp-oag/openapi-gen $@ && rmdir $(TOOLS)/tmp-oag

$(GOLANGCI_LINT):
	mkdir -p $(TOOLS)/tmp-gl && $(TIMED_TOOL) env GOBIN=$(TOOLS)/tmp-gl go install -ldflags="$(TOOL_LDFLAGS)" github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(TOOLS)/tmp-gl/golangci-lint $@ && rmdir $(TOOLS)/tmp-gl

$(KWOK):
	mkdir -p $(TOOLS)/tmp-kwok && $(TIMED_TOOL) env GOBIN=$(TOOLS)/tmp-kwok go install -ldflags="$(TOOL_LDFLAGS)" sigs.k8s.io/kwok/cmd/kwok@$(KWOK_VERSION)
	mv $(TOOLS)/tmp-kwok/kwok $@ && rmdir $(TOOLS)/tmp-kwok

$(COREDNS):
	mkdir -p $(TOOLS)/tmp-coredns && $(TIMED_TOOL) env GOBIN=$(TOOLS)/tmp-coredns go install -ldflags="$(TOOL_LDFLAGS)" github.com/coredns/coredns@$(COREDNS_VERSION)
	mv $(TOOLS)/tmp-coredns/coredns $@ && rmdir $(TOOLS)/tmp-coredns

$(METRICS_SERVER):
	mkdir -p $(TOOLS)/tmp-metrics-server && $(TIMED_TOOL) env GOBIN=$(TOOLS)/tmp-metrics-server go install -ldflags="$(TOOL_LDFLAGS)" sigs.k8s.io/metrics-server/cmd/metrics-server@$(METRICS_SERVER_VERSION)
	mv $(TOOLS)/tmp-metrics-server/metrics-server $@ && rmdir $(TOOLS)/tmp-metrics-server

# cert-manager publishes its controller's main package in a module that
# go install cannot build (replace directive), so a small main in
# hack/cert-manager-controller runs its certificate and issuer loops.
$(CERT_MANAGER):
	mkdir -p $(TOOLS) && cd hack/cert-manager-controller && $(TIMED_TOOL) go build -ldflags="$(TOOL_LDFLAGS)" -o $@.tmp . && mv $@.tmp $@
	$(LINK_VERSIONED)

# Kueue's manager is the main package of its own module; hack/kueue's go.mod
# names it as a tool, so its dependencies are pinned there (Kueue's go.mod has
# no replace directives to mirror).
$(KUEUE):
	mkdir -p $(TOOLS) && cd hack/kueue && $(TIMED_TOOL) go build -ldflags="$(TOOL_LDFLAGS)" -o $@.tmp sigs.k8s.io/kueue/cmd/kueue && mv $@.tmp $@
	$(LINK_VERSIONED)

# Traefik's main package is in its own module; hack/traefik's go.mod names
# it as a tool and repeats the replace and exclude directives of Traefik's
# go.mod, which do not apply to a module that requires it.
$(TRAEFIK):
	mkdir -p $(TOOLS) && cd hack/traefik && $(TIMED_TOOL) go build -ldflags="$(TOOL_LDFLAGS)" -o $@.tmp github.com/traefik/traefik/v3/cmd/traefik && mv $@.tmp $@
	$(LINK_VERSIONED)

$(GOTESTSUM):
	mkdir -p $(TOOLS)/tmp-gotestsum && $(TIMED_TOOL) env GOBIN=$(TOOLS)/tmp-gotestsum go install -ldflags="$(TOOL_LDFLAGS)" gotest.tools/gotestsum@$(GOTESTSUM_VERSION)
	mv $(TOOLS)/tmp-gotestsum/gotestsum $@ && rmdir $(TOOLS)/tmp-gotestsum

$(HELM):
	mkdir -p $(TOOLS)/tmp-helm && $(TIMED_TOOL) env GOBIN=$(TOOLS)/tmp-helm go install -ldflags="$(TOOL_LDFLAGS)" helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
	mv $(TOOLS)/tmp-helm/helm $@ && rmdir $(TOOLS)/tmp-helm

.PHONY: helm
helm: $(HELM) ## Install the pinned helm (used by the chart tests) and print its path.
	@echo $(HELM)

.PHONY: tools
tools: $(CONTROLLER_GEN) $(CODE_GENERATOR) $(OPENAPI_GEN) $(GOLANGCI_LINT) $(KWOK) $(COREDNS) $(METRICS_SERVER) $(CERT_MANAGER) $(KUEUE) $(TRAEFIK) $(HELM) $(GOTESTSUM) ## Install pinned tools into the cache.

.PHONY: k8s-binaries
k8s-binaries: ## Build etcd, kube-apiserver, scheduler, controller-manager, kube-proxy and kubectl (cached).
	hack/k8s-binaries.sh >/dev/null

K8S_BIN = $(shell hack/k8s-binaries.sh)

.PHONY: ray-venv
ray-venv: ## Install the pinned ray[default,serve] into a cached virtualenv (hack/ray-venv.sh prints its path).
	hack/ray-venv.sh

.PHONY: test-e2e-dashboard
test-e2e-dashboard: ## The dashboard client against a real Ray head only.
	RAY_OPERATOR_RAY_VENV="$$(hack/ray-venv.sh)" go test $(GO_TEST_FLAGS) -v -timeout 15m ./test/e2e/dashboard/

##@ Run

# RUN_FEATURE_GATES are the gates `make run` turns on: the alpha RayCronJob
# controller (off by default, as in KubeRay). An ARGS="--feature-gates=..."
# comes later on the command line and replaces them.
RUN_FEATURE_GATES ?= RayCronJob=true

# run_asks is the words of ARGS that turn on ray-local's boolean flag $(1),
# in every form Go's flag package reads as true (-f, --f, -f=true, --f=1,
# ...). `make run` builds an add-on (minutes each, the first time) only when
# its flag asks for it; ray-local reads the variable that names the binary
# only then.
run_asks = $(filter $(foreach d,- --,$(d)$(1) $(foreach v,1 t T true TRUE True,$(d)$(1)=$(v))),$(ARGS))
RUN_ADDONS = $(if $(call run_asks,cert-manager),$(CERT_MANAGER)) $(if $(call run_asks,kueue),$(KUEUE)) $(if $(call run_asks,gateway),$(TRAEFIK))

.PHONY: run
run: $(KWOK) $(COREDNS) $(METRICS_SERVER) $(RUN_ADDONS) ## Run the operator (RayCronJob gate on): against a local cluster whose node runs pods as real processes (kubeconfig in .cache/local/; ARGS=--simulated for kwok nodes) unless a kubeconfig is found. ARGS="--flag ..." passes flags.
	cd $(LOCAL_MODULE) && go build -ldflags "$(LDFLAGS)" -o ../bin/ray-local ./cmd/ray-local
	hack/node-packages.sh
	RAY_OPERATOR_K8S_BIN="$$(hack/k8s-binaries.sh)" RAY_OPERATOR_KWOK="$(KWOK)" RAY_OPERATOR_COREDNS="$(COREDNS)" RAY_OPERATOR_METRICS_SERVER="$(METRICS_SERVER)" RAY_OPERATOR_CERT_MANAGER="$(CERT_MANAGER)" RAY_OPERATOR_KUEUE="$(KUEUE)" RAY_OPERATOR_TRAEFIK="$(TRAEFIK)" \
		RAY_OPERATOR_RAY_VENV="$$(hack/ray-venv.sh)" RAY_OPERATOR_RAY_INSTALLER="$(CURDIR)/hack/ray-venv.sh" RAY_OPERATOR_REDIS_SERVER="$$(hack/redis-server.sh)" \
		exec bin/ray-local --feature-gates=$(RUN_FEATURE_GATES) $(ARGS)

.PHONY: load-image
load-image: ## Load an image archive (ARCHIVE: a `docker save` tarball, or an OCI layout directory or tar; NAME: a repository:tag to run it by instead of the archive's names) into the local node of `make run`, as `kind load image-archive`: pods run it with imagePullPolicy IfNotPresent or Never.
	@test -n "$(ARCHIVE)" || { echo 'usage: make load-image ARCHIVE=path [NAME=repository:tag]'; exit 2; }
	cd $(LOCAL_MODULE) && go build -ldflags "$(LDFLAGS)" -o ../bin/ray-local ./cmd/ray-local
	bin/ray-local load image-archive "$(ARCHIVE)" $(if $(NAME),--name "$(NAME)")

##@ Generate

# CRD generation options, as KubeRay's: descriptions are dropped (maxDescLen=0)
# so that the CRDs, which embed several PodTemplateSpecs, stay far below the
# size limits of kubectl apply and etcd; generateEmbeddedObjectMeta keeps the
# labels/annotations/name of embedded pod templates instead of pruning them;
# allowDangerousTypes admits the float32 fields of RayJob (entrypointNumCpus/Gpus).
CRD_OPTIONS ?= crd:maxDescLen=0,generateEmbeddedObjectMeta=true,allowDangerousTypes=true
API_PATHS := ./api/ray/...
# The local scheduling.k8s.io/v1alpha2 types of the KubernetesWAS plugin
# (k8s.io/api no longer has that version) get deepcopy code too.
WAS_TYPES_PKG := ./internal/batchscheduler/kuberneteswas/schedulingv1alpha2
# The batch scheduler plugins whose PodGroup permissions go into a ClusterRole
# of their own (config/components/batch-scheduler-<name>), granted only when
# that scheduler is chosen (kubernetes-was: with the KubernetesWAS feature
# gate), as KubeRay's Helm chart does; every other package under internal/
# feeds the operator's ClusterRole.
RBAC_PLUGINS := volcano scheduler-plugins kubernetes-was
RBAC_PLUGIN_PKG_volcano := ./internal/batchscheduler/volcano
RBAC_PLUGIN_PKG_scheduler-plugins := ./internal/batchscheduler/schedulerplugins
RBAC_PLUGIN_PKG_kubernetes-was := ./internal/batchscheduler/kuberneteswas
# Volcano's API module ships no CRD manifests (Volcano generates them from
# these types); the envtest suites install the ones generated here.
VOLCANO_API_PKG := volcano.sh/apis/pkg/apis/scheduling/v1beta1
VOLCANO_CRDS := test/crds/volcano
# The Prometheus Operator's Go module ships no CRD manifests either; the
# monitoring test module (test/monitoring, which requires that module) validates
# the monitoring objects against the CRDs generated here from its types.
MONITORING_MODULE := test/monitoring
MONITORING_CRDS := $(MONITORING_MODULE)/testdata/crds
MONITORING_CRD_KINDS := servicemonitors prometheusrules
MONITORING_API_PKG := github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1
# The Helm chart reads copies of the CRDs and of the operator's roles from its
# files/ directory (a chart cannot reach outside its own directory).
CHART_FILES := helm-chart/ray-operator/files
GENERATED_PATHS := api/ray/v1/zz_generated.deepcopy.go $(WAS_TYPES_PKG)/zz_generated.deepcopy.go config/crd/bases config/rbac/role.yaml config/webhook/manifests.yaml \
	$(foreach p,$(RBAC_PLUGINS),config/components/batch-scheduler-$(p)/role.yaml) $(VOLCANO_CRDS) $(CHART_FILES) $(MONITORING_CRDS) pkg/client

.PHONY: generate
generate: $(CONTROLLER_GEN) $(CODE_GENERATOR) $(OPENAPI_GEN) ## Regenerate deepcopy code, the typed Go client in pkg/client (clientset, listers, informers, apply configurations), the CRDs in config/crd/bases, the operator's ClusterRoles (config/rbac/role.yaml, and per batch scheduler in config/components), the webhook configuration in config/webhook/manifests.yaml, Volcano's and the Prometheus Operator's CRDs for the tests and the Helm chart's copies.
	$(CONTROLLER_GEN) object paths="$(API_PATHS)"
	$(CONTROLLER_GEN) object paths="$(WAS_TYPES_PKG)"
	hack/client-gen.sh $(CODE_GENERATOR) $(OPENAPI_GEN)
	rm -f config/crd/bases/ray.io_*.yaml
	$(CONTROLLER_GEN) $(CRD_OPTIONS) paths="$(API_PATHS)" output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=kuberay-operator paths="$$(go list ./internal/... | grep -v $(foreach p,$(RBAC_PLUGINS),-e '$(patsubst ./%,%,$(RBAC_PLUGIN_PKG_$(p)))$$') | paste -sd';')" output:rbac:artifacts:config=config/rbac
	$(foreach p,$(RBAC_PLUGINS),$(CONTROLLER_GEN) rbac:roleName=kuberay-operator-$(p) paths="$(RBAC_PLUGIN_PKG_$(p))" output:rbac:artifacts:config=config/components/batch-scheduler-$(p)$(NEWLINE))
	rm -rf $(VOLCANO_CRDS)
	$(CONTROLLER_GEN) crd paths="$(VOLCANO_API_PKG)" output:crd:artifacts:config=$(VOLCANO_CRDS)
	$(CONTROLLER_GEN) webhook paths="./internal/webhooks/..." output:webhook:artifacts:config=config/webhook
	rm -f $(CHART_FILES)/crds/*.yaml $(CHART_FILES)/rbac/*.yaml
	cp config/crd/bases/ray.io_*.yaml $(CHART_FILES)/crds/
	cp config/rbac/role.yaml config/rbac/leader_election_role.yaml $(CHART_FILES)/rbac/
	$(foreach p,$(RBAC_PLUGINS),cp config/components/batch-scheduler-$(p)/role.yaml $(CHART_FILES)/rbac/batch-scheduler-$(p).yaml$(NEWLINE))
	rm -f $(CHART_FILES)/dashboards/*.json
	cp config/components/monitoring/ray-operator-dashboard.json $(CHART_FILES)/dashboards/ray-operator.json
	rm -rf $(MONITORING_CRDS) $(MONITORING_CRDS).tmp
	cd $(MONITORING_MODULE) && $(CONTROLLER_GEN) crd paths="$(MONITORING_API_PKG)" output:crd:artifacts:config=testdata/crds.tmp
	mkdir -p $(MONITORING_CRDS)
	$(foreach k,$(MONITORING_CRD_KINDS),mv $(MONITORING_CRDS).tmp/monitoring.coreos.com_$(k).yaml $(MONITORING_CRDS)/$(NEWLINE))
	rm -rf $(MONITORING_CRDS).tmp

.PHONY: verify-generated
verify-generated: generate ## Fail when the committed generated files differ from a fresh `make generate`.
	@stale="$$(git status --porcelain --untracked-files=all -- $(GENERATED_PATHS))"; \
	if [ -n "$$stale" ]; then \
		echo "Generated files are stale; run 'make generate' and commit the result:"; \
		echo "$$stale"; \
		git --no-pager diff --stat -- $(GENERATED_PATHS); \
		exit 1; \
	fi

##@ Test

GO_TEST_FLAGS ?= -count=1
UNIT_PKGS = ./api/... ./cmd/... ./internal/... ./pkg/... ./examples/... ./test/scale/ ./hack/
# The local module's unit tests (run from $(LOCAL_MODULE)/); test/soak's own
# checks (flatness, leaks, report, plot) run here, its TestSoak skips
# without SOAK_DURATION (`make soak` sets it).
LOCAL_UNIT_PKGS = ./cmd/... ./internal/... ./test/soak/

.PHONY: test
# The first stages run before the lanes split: verify-generated rewrites
# the CRDs and the chart's files, which the other stages read.
FIRST_STAGES := check-repository verify-generated
# The second lane holds what runs on this machine's node network, the local
# cluster's (one at a time: hostlock): its e2e suites take most of `make
# test` and mostly wait on Ray. The first lane holds the rest: first the
# operator's suites against Ray heads on the host, while the local e2e
# starts its first cluster and runs its one-at-a-time node tests (a head
# started beside the local e2e's three parallel Ray clusters missed its
# 2-minute start on 2 cores), then the CPU-bound stages and the local node
# suite, which runs real pods beside a local cluster without its lock (its
# own bridge, table and queue).
CPU_STAGES := test-e2e-operator lint test-unit-operator test-unit-local test-helm test-integration-operator test-integration-node test-monitoring
E2E_STAGES := test-integration-clusternet test-e2e-local test-e2e-ray-versions
# The cpu lane's stages that only compile and lint run niced beside the e2e
# lane's Ray clusters (hack/test-stages.sh).
NICE_STAGES := lint test-unit-operator test-unit-local test-helm
# TEST_LANES=2 (the default, what CI runs) runs the two lists at once
# (hack/test-stages.sh); TEST_LANES=1 one after the other.
TEST_LANES ?= 2
# The tools the stages use: those of both lanes built before they split
# (two makes building one tool at once would race on its temporary
# directory), then each lane's own as its first stage, so that on a new
# machine one lane's builds overlap the other's.
TEST_TOOLS := $(CONTROLLER_GEN) $(CODE_GENERATOR) $(OPENAPI_GEN) $(COREDNS) $(GOTESTSUM) k8s-binaries
TEST_TOOLS_CPU := $(GOLANGCI_LINT) $(KWOK) $(HELM)
TEST_TOOLS_E2E := $(METRICS_SERVER) $(CERT_MANAGER)
# Traefik and Kueue serve only the e2e packages after `cluster` (faults and
# gateway; kueue): the e2e lane builds them in the background (niced,
# Traefik first) while `cluster` waits on Ray, under TOOLS_LOCK; the suites
# that need them wait for that lock (e2eutil). So on a new machine their
# builds (5-10 minutes of CPU) leave the e2e lane's path. A make of test-e2e-local alone
# builds them first, as a prerequisite (E2E_LOCAL_LATER_TOOLS).
TEST_TOOLS_E2E_LATER := $(TRAEFIK) $(KUEUE)
E2E_LOCAL_LATER_TOOLS ?= $(TEST_TOOLS_E2E_LATER)
TOOLS_LOCK := $(TOOLS)/.later-tools.lock
# hack/prefetch.sh installs, beside the first stages, what only later ones use
# and what waits on the network more than on the CPU (Debian packages, Ray
# from PyPI); a stage that needs it first waits on the same locks.
# The record of the run under way; `make test` prints it at the end, beside
# the previous run's (kept in $(CACHE)/test-times/), and copies the
# printout to .cache/test-times.txt. What failed comes last: CI shows only
# the end of the output.
TEST_TIMINGS := $(CURDIR)/.cache/test-times.tsv

test: ## Everything CI runs, stage by stage (repository checks, generated files, lint, unit, Helm chart, integration (envtest), monitoring and e2e (real Ray)), then where the time went.
	@$(if $(findstring n,$(firstword -$(MAKEFLAGS))),echo "make test: no dry run (its stages are makes of their own: make -n STAGE)"; exit 0;) \
	export RAY_OPERATOR_TIMINGS=$(TEST_TIMINGS) RAY_OPERATOR_TEST_JSON=$(TEST_JSON) RAY_OPERATOR_GOTESTSUM=$(GOTESTSUM); \
	$(TIMINGS) begin; rm -rf $(TEST_JSON); rc=0; \
	$(TIMINGS) run stage "prefetch (background)" -- hack/prefetch.sh >.cache/prefetch.log 2>&1 & prefetch=$$!; \
	TEST_TOOLS="$(TEST_TOOLS)" TEST_TOOLS_CPU="$(TEST_TOOLS_CPU)" TEST_TOOLS_E2E="$(TEST_TOOLS_E2E)" \
	TEST_TOOLS_E2E_LATER="$(TEST_TOOLS_E2E_LATER)" E2E_LOCAL_LATER_TOOLS= RAY_OPERATOR_TOOLS_LOCK="$(TOOLS_LOCK)" TEST_NICE_STAGES="$(NICE_STAGES)" hack/test-stages.sh "$(MAKE)" "$(TEST_LANES)" "$(FIRST_STAGES)" "$(CPU_STAGES)" "$(E2E_STAGES)" || rc=$$?; \
	wait $$prefetch || echo "== prefetch failed (the stages install what they need themselves): .cache/prefetch.log"; \
	$(TIMINGS) report; \
	echo "== every test's output, as go test -json events (one file per stage): $(TEST_JSON)/"; \
	$(TIMINGS) failures; exit $$rc

.PHONY: lint
lint: $(GOLANGCI_LINT) ## go vet and golangci-lint v2 over the four modules (operator, local, test/monitoring, hack/image); a second golangci-lint on the machine waits for the first instead of failing.
	go vet ./...
	$(GOLANGCI_LINT) run --allow-serial-runners ./...
	cd $(LOCAL_MODULE) && go vet ./... && $(GOLANGCI_LINT) run --allow-serial-runners ./...
	cd $(MONITORING_MODULE) && go vet ./... && $(GOLANGCI_LINT) run --allow-serial-runners ./...
	cd $(IMAGE_MODULE) && go vet ./... && $(GOLANGCI_LINT) run --allow-serial-runners ./...

.PHONY: check-repository
check-repository: check-large-files check-tidy ## Fail when the operator module depends on the local stack, a module's go.mod is not tidy, or a tracked file over 1 MiB is not allow-listed.
	hack/check-operator-deps.sh

.PHONY: check-tidy
check-tidy: ## Fail when `go mod tidy` would change the go.mod or go.sum of the operator, the local stack, the monitoring test or the image builder.
	@for m in . $(LOCAL_MODULE) test/monitoring $(IMAGE_MODULE); do \
		(cd $$m && go mod tidy -diff) || { echo "$$m: go.mod/go.sum are not tidy; run 'go mod tidy' there"; exit 1; }; \
	done

.PHONY: check-large-files
check-large-files: ## Fail when a tracked file over 1 MiB is not in hack/large-files-allowlist.txt (a committed binary, say).
	hack/check-large-files.sh

.PHONY: test-unit
test-unit: test-unit-operator test-unit-local ## Fast unit tests (no API server; the local node's sandbox tests, as root, with runc and namespaces).

.PHONY: test-unit-operator test-unit-local
# hack/image's tests compile the operator for two platforms, cgo off and
# -trimpath: on a machine that never built that configuration, about 6
# minutes of CPU (10m 47s, niced beside the e2e lane, in a cold run); the
# package's timeout is 30 minutes, not go test's 10.
test-unit-operator: $(GO_TEST_TOOLS) ## The operator module's unit tests, and the image builder's (hack/image: builds the operator's image three times, pushes to an in-process registry).
	$(GO_TEST) $(GO_TEST_FLAGS) $(UNIT_PKGS) $(GOTEST_TIMES)
	cd $(IMAGE_MODULE) && $(call GO_TEST,image) $(GO_TEST_FLAGS) -timeout 30m ./... $(GOTEST_TIMES)

test-unit-local: $(GO_TEST_TOOLS) ## The local module's unit tests (the sandbox's as root, with runc and namespaces).
	hack/node-packages.sh
	cd $(LOCAL_MODULE) && $(call GO_TEST,local) $(GO_TEST_FLAGS) $(LOCAL_UNIT_PKGS) $(GOTEST_TIMES)

.PHONY: test-helm
test-helm: $(HELM) $(GO_TEST_TOOLS) ## The Helm chart with the pinned helm: lint, golden renders, values mapped to the operator's flags (no API server).
	RAY_OPERATOR_HELM="$(HELM)" $(GO_TEST) $(GO_TEST_FLAGS) ./test/helm/... $(GOTEST_TIMES)

.PHONY: test-monitoring
test-monitoring: k8s-binaries $(HELM) $(GO_TEST_TOOLS) ## The monitoring module (test/monitoring): the dashboard's and alerts' PromQL against a real operator's /metrics (envtest), the rules with Prometheus' rule loader, the kustomize and Helm monitoring objects against the Prometheus Operator's CRDs.
	cd $(MONITORING_MODULE) && RAY_OPERATOR_K8S_BIN="$$(../../hack/k8s-binaries.sh)" RAY_OPERATOR_HELM="$(HELM)" $(GO_TEST) $(GO_TEST_FLAGS) -timeout 10m ./... $(GOTEST_TIMES)

.PHONY: test-integration
test-integration: test-integration-operator test-integration-local ## envtest suites against a real kube-apiserver and etcd, with client-go's cache mutation detector (the Helm chart installed with helm among them; the node network suite, as root, with kube-proxy, CoreDNS and nft installed by apt-get when missing).

.PHONY: test-integration-operator test-integration-local
test-integration-operator: k8s-binaries $(KWOK) $(HELM) $(COREDNS) $(GO_TEST_TOOLS) ## The operator module's envtest suites.
	KUBE_CACHE_MUTATION_DETECTOR=true RAY_OPERATOR_K8S_BIN="$$(hack/k8s-binaries.sh)" RAY_OPERATOR_KWOK="$(KWOK)" RAY_OPERATOR_HELM="$(HELM)" RAY_OPERATOR_COREDNS="$(COREDNS)" \
		$(GO_TEST) $(GO_TEST_FLAGS) -p 2 -timeout 20m ./test/integration/... $(GOTEST_TIMES)

test-integration-local: test-integration-node test-integration-clusternet ## The local module's node and node-network suites (as root).

.PHONY: test-integration-node test-integration-clusternet
test-integration-node: k8s-binaries $(GO_TEST_TOOLS) ## The local node against envtest (as root, runc installed by apt-get when missing): pods, volumes, probes, NetworkPolicies, a disconnection past the grace period.
	hack/node-packages.sh
	cd $(LOCAL_MODULE) && RAY_OPERATOR_K8S_BIN="$$(../hack/k8s-binaries.sh)" \
		$(GO_TEST) $(GO_TEST_FLAGS) -timeout 20m ./test/integration/node/ $(GOTEST_TIMES)

.PHONY: test-cgroup2
test-cgroup2: $(GO_TEST_TOOLS) ## The local node's cgroup v2 support, in a Linux kernel booted in qemu with cgroup2 at /sys/fs/cgroup (this machine's host is cgroup v1): pids.max, the pods' memory.max, usage, removal, runc's containers (as root: runc, qemu, cpio, Debian's kernel and busybox via hack/cgroup2-vm.sh).
	hack/node-packages.sh
	cd $(LOCAL_MODULE) && RAY_OPERATOR_CGROUP2_VM="$$(../hack/cgroup2-vm.sh)" \
		$(GO_TEST) $(GO_TEST_FLAGS) -timeout 15m ./test/cgroup2/ $(GOTEST_TIMES)

test-integration-clusternet: k8s-binaries $(COREDNS) $(GO_TEST_TOOLS) ## The local cluster's node network (as root: bridge, kube-proxy, CoreDNS, nft; the machine-wide lock).
	hack/node-packages.sh
	cd $(LOCAL_MODULE) && RAY_OPERATOR_K8S_BIN="$$(../hack/k8s-binaries.sh)" RAY_OPERATOR_COREDNS="$(COREDNS)" \
		$(GO_TEST) $(GO_TEST_FLAGS) -timeout 20m ./test/integration/clusternet/ $(GOTEST_TIMES)

# CHAOS_LIFECYCLES and CHAOS_SEED size and seed `make chaos` (a random seed
# when empty). `make test` runs the same suite with 100 lifecycles among the
# integration tests; docs/dev/reliability.md has the figures of both.
CHAOS_LIFECYCLES ?= 1000
CHAOS_SEED ?=

.PHONY: chaos
chaos: k8s-binaries ## The RayJob chaos suite with CHAOS_LIFECYCLES lifecycles (default 1,000: about 13 min on a loaded 2-core machine) and CHAOS_SEED.
	RAY_OPERATOR_K8S_BIN="$$(hack/k8s-binaries.sh)" RAY_OPERATOR_CHAOS_LIFECYCLES=$(CHAOS_LIFECYCLES) $(if $(CHAOS_SEED),RAY_OPERATOR_CHAOS_SEED=$(CHAOS_SEED)) \
		go test $(GO_TEST_FLAGS) -p 1 -timeout 90m -run '^TestRayJobChaos$$' -v ./test/integration/rayjobchaos/

.PHONY: test-e2e test-e2e-operator test-e2e-local test-e2e-ray-versions
test-e2e: test-e2e-operator test-e2e-local test-e2e-ray-versions ## Suites against a real Ray from PyPI (installed into a cached virtualenv), a real redis-server (installed with apt-get when missing), envtest, and the local cluster whose node runs real Ray pods (local/test/e2e; its faults package SIGKILLs the operator binary at points drawn from FAULTS_SEED, random and printed when unset), the oldest and the newest Ray release among them.

test-e2e-operator: k8s-binaries $(COREDNS) $(GO_TEST_TOOLS) ## The operator module's suites against a Ray head on this host (dashboard client, RayService with real Serve) and a real redis-server (GCS cleanup). One package at a time: Ray heads starting together on 2 cores miss ray start's own deadlines.
	RAY_OPERATOR_RAY_VENV="$$(hack/ray-venv.sh)" RAY_OPERATOR_REDIS_SERVER="$$(hack/redis-server.sh)" RAY_OPERATOR_K8S_BIN="$$(hack/k8s-binaries.sh)" RAY_OPERATOR_COREDNS="$(COREDNS)" \
		$(GO_TEST) $(GO_TEST_FLAGS) -p 1 -timeout 30m ./test/e2e/... $(GOTEST_TIMES)

# E2E_PARALLEL is how many of a local e2e package's waiting tests (those
# that call t.Parallel) run at once on its one cluster.
E2E_PARALLEL ?= 3

test-e2e-local: k8s-binaries $(COREDNS) $(METRICS_SERVER) $(CERT_MANAGER) $(E2E_LOCAL_LATER_TOOLS) $(GO_TEST_TOOLS) ## The local cluster with real Ray pods (local/test/e2e), one package (one cluster) at a time, E2E_PARALLEL (3) of its waiting tests at once.
	hack/node-packages.sh
	cd $(LOCAL_MODULE) && RAY_OPERATOR_RAY_VENV="$$(../hack/ray-venv.sh)" RAY_OPERATOR_REDIS_SERVER="$$(../hack/redis-server.sh)" RAY_OPERATOR_K8S_BIN="$$(../hack/k8s-binaries.sh)" RAY_OPERATOR_COREDNS="$(COREDNS)" RAY_OPERATOR_METRICS_SERVER="$(METRICS_SERVER)" RAY_OPERATOR_CERT_MANAGER="$(CERT_MANAGER)" RAY_OPERATOR_KUEUE="$(KUEUE)" RAY_OPERATOR_TRAEFIK="$(TRAEFIK)" \
		$(GO_TEST) $(GO_TEST_FLAGS) -p 1 -parallel $(E2E_PARALLEL) -timeout 30m ./test/e2e/... $(GOTEST_TIMES)

.PHONY: test-kuberay-samples
# KUBERAY_SAMPLES_VERSION is the KubeRay release whose samples `make
# test-kuberay-samples` applies: the Go module proxy serves KubeRay's
# operator module, samples included (v1.4.0 and v1.5.0 checked), and `go
# mod download` puts it in the module cache, outside the clone.
KUBERAY_SAMPLES_VERSION ?= v1.5.0
# KUBERAY_SAMPLES_PARALLEL samples run at once, each in its namespace (1:
# one at a time); the long ones start first.
KUBERAY_SAMPLES_PARALLEL ?= 3

test-kuberay-samples: k8s-binaries $(COREDNS) $(METRICS_SERVER) ## Not in `make test`: KubeRay's own RayCluster and RayJob samples (release KUBERAY_SAMPLES_VERSION, v1.5.0) applied unchanged, KUBERAY_SAMPLES_PARALLEL (3) at a time, on the local cluster as `make run` starts it, with real Ray: pass, fail or skip (with its reason) and the time to ready/SUCCEEDED of each, in a table at the end and in .cache/kuberay-samples.txt (docs/dev/kuberay-samples.md).
	hack/node-packages.sh
	mkdir -p .cache
	cd $(LOCAL_MODULE) && RAY_OPERATOR_RAY_VENV="$$(../hack/ray-venv.sh)" RAY_OPERATOR_REDIS_SERVER="$$(../hack/redis-server.sh)" RAY_OPERATOR_K8S_BIN="$$(../hack/k8s-binaries.sh)" RAY_OPERATOR_COREDNS="$(COREDNS)" RAY_OPERATOR_METRICS_SERVER="$(METRICS_SERVER)" \
		RAY_OPERATOR_KUBERAY_SAMPLES="$(KUBERAY_SAMPLES_VERSION)" go test -count=1 -v -timeout 120m -parallel $(KUBERAY_SAMPLES_PARALLEL) -run '^TestKubeRaySamples$$' ./test/e2e/kuberaysamples/ 2>&1 | tee $(CURDIR)/.cache/kuberay-samples.txt

.PHONY: test-install
test-install: k8s-binaries $(COREDNS) $(METRICS_SERVER) $(HELM) ## Not in `make test`: the operator installed as users install it (local/test/e2e/install): the image hack/image builds from this source pushed into the local cluster's registry, helm-chart/ray-operator installed with the pinned helm, the operator a Pod under the chart's ServiceAccount; with real Ray a RayJob, the webhooks, `helm upgrade` to another version while a RayService serves and a RayJob runs, leader failover with two replicas, `helm uninstall`; first the switch from KubeRay's chart and operator (feeaf72, from KUBERAY_MIRROR at test time) to this chart while a RayService serves, then a SIGKILLed leader (docs/install.md).
	hack/node-packages.sh
	cd $(LOCAL_MODULE) && RAY_OPERATOR_E2E_INSTALL=true RAY_OPERATOR_HELM="$(HELM)" RAY_OPERATOR_RAY_VENV="$$(../hack/ray-venv.sh)" RAY_OPERATOR_REDIS_SERVER="$$(../hack/redis-server.sh)" RAY_OPERATOR_K8S_BIN="$$(../hack/k8s-binaries.sh)" RAY_OPERATOR_COREDNS="$(COREDNS)" RAY_OPERATOR_METRICS_SERVER="$(METRICS_SERVER)" \
		go test -count=1 -v -timeout 40m ./test/e2e/install/

.PHONY: test-ray-versions
# RAY_VERSIONS are the Ray releases `make test-ray-versions` runs side by
# side; the package's own default, when it is empty, is the oldest and the
# newest (2.9.3 and 2.60.0). RAY_VERSIONS_PARALLEL is go test's -parallel,
# how many cases run at once: with 8, eight Ray heads started together on a
# busy 2-core machine and two missed ray start's dashboard deadline.
RAY_VERSIONS ?= 2.9.3 2.41.0 2.52.0 2.60.0
RAY_VERSIONS_PARALLEL ?= 4

# test-e2e-ray-versions is `make test`'s share of the Ray release matrix
# (issue #50 item 3): the rayversions package with RAY_VERSIONS empty, so
# that it runs its own default, the oldest and the newest release. The older
# one's virtualenv is installed as the image pull on first use (hack/prefetch.sh
# installs it beside the first stages), in the cache outside the clone.
test-e2e-ray-versions: k8s-binaries $(COREDNS) $(METRICS_SERVER) $(GO_TEST_TOOLS) ## The oldest and the newest Ray release (local/test/e2e/rayversions' default pair, 2.9.3 and 2.60.0) through test-ray-versions' cases on the local cluster, RAY_VERSIONS_PARALLEL (4) cases at once; `make test` runs it after test-e2e-local.
	hack/node-packages.sh
	cd $(LOCAL_MODULE) && RAY_OPERATOR_RAY_VENV="$$(../hack/ray-venv.sh)" RAY_OPERATOR_RAY_INSTALLER="$(CURDIR)/hack/ray-venv.sh" RAY_OPERATOR_REDIS_SERVER="$$(../hack/redis-server.sh)" RAY_OPERATOR_K8S_BIN="$$(../hack/k8s-binaries.sh)" RAY_OPERATOR_COREDNS="$(COREDNS)" RAY_OPERATOR_METRICS_SERVER="$(METRICS_SERVER)" \
		RAY_VERSIONS= $(GO_TEST) $(GO_TEST_FLAGS) -parallel $(RAY_VERSIONS_PARALLEL) -timeout 30m -run '^TestRayVersions$$' ./test/e2e/rayversions/ $(GOTEST_TIMES)

test-ray-versions: k8s-binaries $(COREDNS) $(METRICS_SERVER) ## Not in `make test` (which runs the oldest and the newest: test-e2e-ray-versions): real Ray of each release of RAY_VERSIONS (2.9.3 2.41.0 2.52.0 2.60.0, installed as the image pull on first use) on the local cluster, side by side: a RayCluster with a worker Ready under that release's probes, RayJobs in K8sJobMode and HTTPMode, the autoscaler adding a worker, GCS FT with Redis across a head Pod deletion, a RayService answering; a table of results at the end and in .cache/ray-versions.txt (docs/dev/ray-versions.md).
	hack/node-packages.sh
	mkdir -p .cache
	cd $(LOCAL_MODULE) && RAY_OPERATOR_RAY_VENV="$$(../hack/ray-venv.sh)" RAY_OPERATOR_RAY_INSTALLER="$(CURDIR)/hack/ray-venv.sh" RAY_OPERATOR_REDIS_SERVER="$$(../hack/redis-server.sh)" RAY_OPERATOR_K8S_BIN="$$(../hack/k8s-binaries.sh)" RAY_OPERATOR_COREDNS="$(COREDNS)" RAY_OPERATOR_METRICS_SERVER="$(METRICS_SERVER)" \
		RAY_VERSIONS="$(RAY_VERSIONS)" go test -count=1 -v -parallel $(RAY_VERSIONS_PARALLEL) -timeout 60m -run '^TestRayVersions$$' ./test/e2e/rayversions/ 2>&1 | tee $(CURDIR)/.cache/ray-versions.txt

.PHONY: soak
# SOAK_DURATION is how long `make soak` cycles RayJobs, SOAK_UPGRADE_EVERY
# how often it upgrades the RayService in between (docs/dev/reliability.md,
# scenario 5). The go test timeout is off: the soak bounds each step itself.
SOAK_DURATION ?= 30m
SOAK_UPGRADE_EVERY ?= 5m

soak: k8s-binaries $(COREDNS) $(METRICS_SERVER) $(CERT_MANAGER) ## Not in `make test`: cycles RayJobs and RayService upgrades on the local cluster for SOAK_DURATION (30m), fails on a wrong terminal state, operator RSS/goroutine growth or a leaked Pod, sandbox, netns, cgroup or nftables rule; figures and a memory plot in .cache/soak/<time>/.
	hack/node-packages.sh
	cd $(LOCAL_MODULE) && RAY_OPERATOR_RAY_VENV="$$(../hack/ray-venv.sh)" RAY_OPERATOR_REDIS_SERVER="$$(../hack/redis-server.sh)" RAY_OPERATOR_K8S_BIN="$$(../hack/k8s-binaries.sh)" RAY_OPERATOR_COREDNS="$(COREDNS)" RAY_OPERATOR_METRICS_SERVER="$(METRICS_SERVER)" RAY_OPERATOR_CERT_MANAGER="$(CERT_MANAGER)" \
		SOAK_DURATION="$(SOAK_DURATION)" SOAK_UPGRADE_EVERY="$(SOAK_UPGRADE_EVERY)" go test -count=1 -v -timeout 0 -run '^TestSoak$$' ./test/soak/

.PHONY: bench
# FUZZ_TARGETS are the native Go fuzz targets of internal/fuzz; `make test`
# runs their seed corpus (config/samples and testdata/fuzz) as ordinary
# tests, `make fuzz` fuzzes each for FUZZTIME (8 targets x 60 s = 8 min).
# Minimizing is capped at 50 runs: Go minimizes every new interesting input
# for up to 60 s by default, which on these targets stalls fuzzing for long
# stretches (0 execs/s).
FUZZ_TARGETS := FuzzRayCluster FuzzRayClusterKnobs FuzzRayJob FuzzRayService FuzzRayCronJob FuzzCronSchedule FuzzDashboardAnswers FuzzConfiguration
FUZZTIME ?= 60s

.PHONY: fuzz
fuzz: ## Fuzz every target of internal/fuzz for FUZZTIME each; a crash is written to internal/fuzz/testdata/fuzz.
	@for t in $(FUZZ_TARGETS); do \
		echo "== $$t ($(FUZZTIME))"; \
		go test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./internal/fuzz/ || exit 1; \
	done

bench: ## Benchmarks of both modules (speed and memory targets are measured here, never in tests).
	go test -run '^$$' -bench . -benchmem $(UNIT_PKGS)
	cd $(LOCAL_MODULE) && go test -run '^$$' -bench . -benchmem $(LOCAL_UNIT_PKGS)

# bench-scale sizes, kinds and operator flags (see docs/dev/benchmarks.md).
# The 10,000 comparison, one size at a time on a quiet machine, e.g.
#   make bench-scale SCALE_SIZES=3000,10000 SCALE_KINDS=floor,raycluster
#   make bench-scale SCALE_SIZES=3000,10000 SCALE_KINDS=raycluster \
#     SCALE_ARGS="-operator-binary $$(hack/kuberay-reference.sh) -operator-user-agent kuberay-operator -label kuberay-feeaf72"
# SCALE_ARGS passes any other flag of go run ./test/scale (-pprof-dir, -label, ...).
SCALE_SIZES ?= 100,300,1000
SCALE_KINDS ?= raycluster,rayjob
SCALE_OPERATOR_FLAGS ?=
SCALE_ARGS ?=
SCALE_RESULTS ?= .cache/bench-scale/results.jsonl

.PHONY: bench-local
bench-local: k8s-binaries $(COREDNS) $(METRICS_SERVER) $(CERT_MANAGER) ## Footprint of config/samples/ray-cluster.minimal.yaml (1 head, 1 worker) on the local node with real Ray: seconds from apply to ready, each pod's memory, CPU while idle (the average of 2 clusters after a first one that go test runs to size the benchmark; one after another, about 5 minutes).
	hack/node-packages.sh
	cd $(LOCAL_MODULE) && RAY_OPERATOR_RAY_VENV="$$(../hack/ray-venv.sh)" RAY_OPERATOR_REDIS_SERVER="$$(../hack/redis-server.sh)" RAY_OPERATOR_K8S_BIN="$$(../hack/k8s-binaries.sh)" RAY_OPERATOR_COREDNS="$(COREDNS)" RAY_OPERATOR_METRICS_SERVER="$(METRICS_SERVER)" RAY_OPERATOR_CERT_MANAGER="$(CERT_MANAGER)" \
		go test -count=1 -run '^$$' -bench BenchmarkMinimalClusterFootprint -benchtime 2x -timeout 30m ./test/e2e/cluster/

.PHONY: bench-scale
bench-scale: $(KWOK) k8s-binaries ## Scale benchmark on the local control plane with kwok nodes: N RayClusters (operator binary) and N RayJobs (simulated dashboards), or the floor (SCALE_KINDS=floor: the same Pods and Services created directly); prints a table and JSON lines (also appended to .cache/bench-scale/results.jsonl). About 25 minutes for the default sizes.
	mkdir -p .cache/bench-scale $(dir $(SCALE_RESULTS))
	RAY_OPERATOR_K8S_BIN="$$(hack/k8s-binaries.sh)" RAY_OPERATOR_KWOK="$(KWOK)" go run ./test/scale \
		-sizes "$(SCALE_SIZES)" -kinds "$(SCALE_KINDS)" -operator-flags "$(SCALE_OPERATOR_FLAGS)" -json $(SCALE_RESULTS) $(SCALE_ARGS)

.PHONY: bench-scale-compare
bench-scale-compare: ## Comparison tables (ours, the reference build, the floor) of the bench-scale runs in SCALE_RESULTS, and their ready-over-time plot (.cache/bench-scale/ready.png).
	go run ./test/scale -compare $(SCALE_RESULTS) -plot .cache/bench-scale/ready.png

.PHONY: kuberay-reference
kuberay-reference: ## Build KubeRay's ray-operator at the reference commit feeaf72 from the mirror, outside the repository (~/.cache/ray-operator/kuberay-feeaf72/ray-operator; KUBERAY_MIRROR, KUBERAY_COMMIT, KUBERAY_OUT override).
	hack/kuberay-reference.sh
