# ray-operator build, test and run targets. Tools are installed with `go install`
# at pinned versions into a cache outside the work tree, so a fresh clone
# builds everything it needs and a second run reuses it.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

CACHE ?= $(or $(RAY_OPERATOR_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/ray-operator)
export RAY_OPERATOR_CACHE := $(CACHE)

CONTROLLER_GEN_VERSION ?= v0.23.0

define NEWLINE


endef
GOLANGCI_LINT_VERSION ?= v2.15.0
KWOK_VERSION ?= v0.8.0

TOOLS := $(CACHE)/tools
CONTROLLER_GEN := $(TOOLS)/controller-gen-$(CONTROLLER_GEN_VERSION)
GOLANGCI_LINT := $(TOOLS)/golangci-lint-$(GOLANGCI_LINT_VERSION)
KWOK := $(TOOLS)/kwok-$(KWOK_VERSION)

.PHONY: all
all: build

# VERSION is the version the binaries report (--version, the
# ray_operator_build_info metric) and record on the objects they create
# (ray.io/kuberay-version, RAY_USAGE_STATS_EXTRA_TAGS): `git describe` of the
# checkout, or "dev" outside one.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/ray-operator/ray-operator/internal/buildinfo.version=$(VERSION)

.PHONY: build
build: ## Build bin/ray-operator and bin/ray-local, stamped with VERSION.
	go build -ldflags "$(LDFLAGS)" -o bin/ray-operator ./cmd/ray-operator
	go build -ldflags "$(LDFLAGS)" -o bin/ray-local ./cmd/ray-local

##@ Tools

$(CONTROLLER_GEN):
	mkdir -p $(TOOLS)/tmp-cg && GOBIN=$(TOOLS)/tmp-cg go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(TOOLS)/tmp-cg/controller-gen $@ && rmdir $(TOOLS)/tmp-cg

$(GOLANGCI_LINT):
	mkdir -p $(TOOLS)/tmp-gl && GOBIN=$(TOOLS)/tmp-gl go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(TOOLS)/tmp-gl/golangci-lint $@ && rmdir $(TOOLS)/tmp-gl

$(KWOK):
	mkdir -p $(TOOLS)/tmp-kwok && GOBIN=$(TOOLS)/tmp-kwok go install sigs.k8s.io/kwok/cmd/kwok@$(KWOK_VERSION)
	mv $(TOOLS)/tmp-kwok/kwok $@ && rmdir $(TOOLS)/tmp-kwok

.PHONY: tools
tools: $(CONTROLLER_GEN) $(GOLANGCI_LINT) $(KWOK) ## Install pinned tools into the cache.

.PHONY: k8s-binaries
k8s-binaries: ## Build etcd, kube-apiserver, scheduler, controller-manager and kubectl (cached).
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

.PHONY: run
run: $(KWOK) ## Run the operator (RayCronJob gate on): against a local control plane (kubeconfig in .cache/local/) unless a kubeconfig is found. ARGS="--flag ..." passes flags.
	go build -ldflags "$(LDFLAGS)" -o bin/ray-local ./cmd/ray-local
	RAY_OPERATOR_K8S_BIN="$$(hack/k8s-binaries.sh)" RAY_OPERATOR_KWOK="$(KWOK)" exec bin/ray-local --feature-gates=$(RUN_FEATURE_GATES) $(ARGS)

##@ Generate

# CRD generation options, as KubeRay's: descriptions are dropped (maxDescLen=0)
# so that the CRDs, which embed several PodTemplateSpecs, stay far below the
# size limits of kubectl apply and etcd; generateEmbeddedObjectMeta keeps the
# labels/annotations/name of embedded pod templates instead of pruning them;
# allowDangerousTypes admits the float32 fields of RayJob (entrypointNumCpus/Gpus).
CRD_OPTIONS ?= crd:maxDescLen=0,generateEmbeddedObjectMeta=true,allowDangerousTypes=true
API_PATHS := ./api/ray/...
# The batch scheduler plugins whose PodGroup permissions go into a ClusterRole
# of their own (config/components/batch-scheduler-<name>), granted only when
# that scheduler is chosen, as KubeRay's Helm chart does; every other package
# under internal/ feeds the operator's ClusterRole.
RBAC_PLUGINS := volcano scheduler-plugins
RBAC_PLUGIN_PKG_volcano := ./internal/batchscheduler/volcano
RBAC_PLUGIN_PKG_scheduler-plugins := ./internal/batchscheduler/schedulerplugins
# Volcano's API module ships no CRD manifests (Volcano generates them from
# these types); the envtest suites install the ones generated here.
VOLCANO_API_PKG := volcano.sh/apis/pkg/apis/scheduling/v1beta1
VOLCANO_CRDS := test/crds/volcano
GENERATED_PATHS := api/ray/v1/zz_generated.deepcopy.go config/crd/bases config/rbac/role.yaml config/webhook/manifests.yaml \
	$(foreach p,$(RBAC_PLUGINS),config/components/batch-scheduler-$(p)/role.yaml) $(VOLCANO_CRDS)

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Regenerate deepcopy code, the CRDs in config/crd/bases, the operator's ClusterRoles (config/rbac/role.yaml, and per batch scheduler in config/components), the webhook configuration in config/webhook/manifests.yaml and Volcano's CRDs for the tests.
	$(CONTROLLER_GEN) object paths="$(API_PATHS)"
	rm -f config/crd/bases/ray.io_*.yaml
	$(CONTROLLER_GEN) $(CRD_OPTIONS) paths="$(API_PATHS)" output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=kuberay-operator paths="$$(go list ./internal/... | grep -v $(foreach p,$(RBAC_PLUGINS),-e '$(patsubst ./%,%,$(RBAC_PLUGIN_PKG_$(p)))$$') | paste -sd';')" output:rbac:artifacts:config=config/rbac
	$(foreach p,$(RBAC_PLUGINS),$(CONTROLLER_GEN) rbac:roleName=kuberay-operator-$(p) paths="$(RBAC_PLUGIN_PKG_$(p))" output:rbac:artifacts:config=config/components/batch-scheduler-$(p)$(NEWLINE))
	rm -rf $(VOLCANO_CRDS)
	$(CONTROLLER_GEN) crd paths="$(VOLCANO_API_PKG)" output:crd:artifacts:config=$(VOLCANO_CRDS)
	$(CONTROLLER_GEN) webhook paths="./internal/webhooks/..." output:webhook:artifacts:config=config/webhook

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
UNIT_PKGS = ./api/... ./cmd/... ./internal/...

.PHONY: test
test: verify-generated lint test-unit test-integration test-e2e ## Everything CI runs: generated files, lint, unit, integration (envtest) and e2e (real Ray).

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint v2 over the module.
	go vet ./...
	$(GOLANGCI_LINT) run ./...

.PHONY: test-unit
test-unit: ## Fast unit tests (no API server).
	go test $(GO_TEST_FLAGS) $(UNIT_PKGS)

.PHONY: test-integration
test-integration: k8s-binaries $(KWOK) ## envtest suites against a real kube-apiserver and etcd.
	RAY_OPERATOR_K8S_BIN="$$(hack/k8s-binaries.sh)" RAY_OPERATOR_KWOK="$(KWOK)" \
		go test $(GO_TEST_FLAGS) -p 2 -timeout 20m ./test/integration/...

.PHONY: test-e2e
test-e2e: k8s-binaries ## Suites against a real Ray head from PyPI (installed into a cached virtualenv), a real redis-server (installed with apt-get when missing) and, for the RayService suite, envtest.
	RAY_OPERATOR_RAY_VENV="$$(hack/ray-venv.sh)" RAY_OPERATOR_REDIS_SERVER="$$(hack/redis-server.sh)" RAY_OPERATOR_K8S_BIN="$$(hack/k8s-binaries.sh)" \
		go test $(GO_TEST_FLAGS) -timeout 20m ./test/e2e/...

.PHONY: bench
bench: ## Benchmarks (speed and memory targets are measured here, never in tests).
	go test -run '^$$' -bench . -benchmem $(UNIT_PKGS)
