# kopgo's build. `make help` lists the targets.
#
# Tools are built from the Go module proxy and cached under bin/ in one folder
# per tool and version (bin/k8s-v1.37.1/, bin/etcd-v3.7.0/, ...), so a second
# run finds them and only a version change rebuilds. bin/testkit/ holds links
# to the binaries the tests use; the testkit finds it from KOPGO_TESTKIT_BIN.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

BIN := $(CURDIR)/bin
GO ?= go

# Versions. Kubernetes and etcd are pinned in tools/go.mod; read them from there
# so that there is one place to change.
tools_version = $(shell awk '$$1 != "//" {for (i = 1; i < NF; i++) if ($$i == "$(1)") {print $$(i+1); exit}}' tools/go.mod)
K8S_VERSION := $(call tools_version,k8s.io/kubernetes)
ETCD_VERSION := $(call tools_version,go.etcd.io/etcd/server/v3)
PROVISIONER_LIB_VERSION := $(call tools_version,sigs.k8s.io/sig-storage-lib-external-provisioner/v13)
ifeq ($(and $(K8S_VERSION),$(ETCD_VERSION),$(PROVISIONER_LIB_VERSION)),)
$(error cannot read the Kubernetes, etcd and provisioner library versions from tools/go.mod)
endif
KWOK_VERSION := v0.8.0
GOLANGCI_LINT_VERSION := v2.15.0
CONTROLLER_GEN_VERSION := v0.23.0

K8S_DIR := $(BIN)/k8s-$(K8S_VERSION)
ETCD_DIR := $(BIN)/etcd-$(ETCD_VERSION)
KWOK_DIR := $(BIN)/kwok-$(KWOK_VERSION)
PROVISIONER_DIR := $(BIN)/provisioner-$(PROVISIONER_LIB_VERSION)
TESTKIT_BIN := $(BIN)/testkit
GOLANGCI_LINT := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint
CONTROLLER_GEN := $(BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)/controller-gen

K8S_COMPONENTS := kube-apiserver kube-controller-manager kube-scheduler
# Stamp the real version into the binaries (kubectl version, /version).
K8S_MINOR := $(word 2,$(subst ., ,$(K8S_VERSION)))
K8S_LDFLAGS := -s -w \
	-X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=$(K8S_MINOR) \
	-X k8s.io/component-base/version.gitTreeState=clean \
	-X k8s.io/client-go/pkg/version.gitVersion=$(K8S_VERSION) \
	-X k8s.io/client-go/pkg/version.gitMajor=1 \
	-X k8s.io/client-go/pkg/version.gitMinor=$(K8S_MINOR)

# kwok's own stages that the full cluster uses as they are: nodes become
# Ready and keep their leases, deleted pods go away. Copied from the kwok
# module into bin/ by the tools build (the library never imports kwok). What
# a running pod does (start, succeed, fail, crash-loop, ...) is decided by the
# testkit's own stages, embedded in test/testkit/stages/.
KWOK_BASE_STAGES := node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
	pod/fast/pod-delete.yaml

# The dynamic volume provisioner: our code in tools/cmd/provisioner on the SIG
# Storage provisioner library. Cached by the library's version and rebuilt
# when its source changes.
PROVISIONER_SRC := tools/cmd/provisioner/main.go tools/go.mod tools/go.sum

TEST_TIMEOUT ?= 20m
TEST_FLAGS ?=

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Tools

.PHONY: tools
tools: testkit-bin $(GOLANGCI_LINT) $(CONTROLLER_GEN) ## Build every tool into bin/ (cached by version).

.PHONY: testkit-bin
testkit-bin: $(addprefix $(K8S_DIR)/,$(K8S_COMPONENTS)) $(ETCD_DIR)/etcd $(KWOK_DIR)/kwok $(KWOK_DIR)/base-stages.yaml $(PROVISIONER_DIR)/provisioner ## Build the control-plane binaries the tests use.
	@mkdir -p $(TESTKIT_BIN)
	@for c in $(K8S_COMPONENTS); do ln -sfn $(K8S_DIR)/$$c $(TESTKIT_BIN)/$$c; done
	@ln -sfn $(ETCD_DIR)/etcd $(TESTKIT_BIN)/etcd
	@ln -sfn $(KWOK_DIR)/kwok $(TESTKIT_BIN)/kwok
	@ln -sfn $(KWOK_DIR)/base-stages.yaml $(TESTKIT_BIN)/kwok-base-stages.yaml
	@ln -sfn $(PROVISIONER_DIR)/provisioner $(TESTKIT_BIN)/provisioner
	@echo "$(K8S_VERSION)" > $(TESTKIT_BIN)/VERSION

# Each binary is built into a temporary name and moved into place, so an
# interrupted build never leaves a half-written file that looks cached.
$(K8S_DIR)/%:
	@mkdir -p $(@D)
	@echo "building $* $(K8S_VERSION) (first build takes minutes)"
	cd tools && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(K8S_LDFLAGS)' -o $@.tmp k8s.io/kubernetes/cmd/$*
	@mv $@.tmp $@

$(ETCD_DIR)/etcd:
	@mkdir -p $(@D)
	@echo "building etcd $(ETCD_VERSION)"
	cd tools && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $@.tmp ./cmd/etcd
	@mv $@.tmp $@

$(KWOK_DIR)/kwok:
	@mkdir -p $(@D)/.gobin
	@echo "building kwok $(KWOK_VERSION)"
	CGO_ENABLED=0 GOBIN=$(@D)/.gobin $(GO) install -trimpath -ldflags '-s -w' sigs.k8s.io/kwok/cmd/kwok@$(KWOK_VERSION)
	@mv $(@D)/.gobin/kwok $@ && rmdir $(@D)/.gobin

$(KWOK_DIR)/base-stages.yaml:
	@mkdir -p $(@D)
	@dir=$$($(GO) mod download -json sigs.k8s.io/kwok@$(KWOK_VERSION) | awk -F'"' '$$2=="Dir"{print $$4}'); \
	for s in $(KWOK_BASE_STAGES); do echo "---"; cat "$$dir/kustomize/stage/$$s"; done > $@.tmp
	@mv $@.tmp $@

$(PROVISIONER_DIR)/provisioner: $(PROVISIONER_SRC)
	@mkdir -p $(@D)
	@echo "building provisioner (sig-storage-lib-external-provisioner $(PROVISIONER_LIB_VERSION))"
	cd tools && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $@.tmp ./cmd/provisioner
	@mv $@.tmp $@

$(GOLANGCI_LINT):
	@mkdir -p $(@D)
	@echo "building golangci-lint $(GOLANGCI_LINT_VERSION)"
	CGO_ENABLED=0 GOBIN=$(@D) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

$(CONTROLLER_GEN):
	@mkdir -p $(@D)
	@echo "building controller-gen $(CONTROLLER_GEN_VERSION)"
	CGO_ENABLED=0 GOBIN=$(@D) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)

##@ Development

# Each example's API types and RBAC markers; controller-gen writes the
# deepcopy functions next to the types, and the CRD and RBAC manifests under
# the example's config/. An example with a PROJECT file is a kubebuilder
# project and gets kubebuilder's paths and names (`make manifests generate`
# in a scaffolded project): CRDs in config/crd/bases, the ClusterRole
# manager-role in config/rbac/role.yaml, beside the kustomize files. (The
# kubebuilder migration guide, docs/kubebuilder, carries kubebuilder's own
# generated files of its CronJob tutorial, unchanged.)
EXAMPLES_GEN := webapp kubebuilder echoserver database dnsrecord

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate the examples' deepcopy code, CRDs and RBAC with controller-gen (CRDs checked offline as the API server would), and the ops module's rules, manifests and dashboard.
	@for e in $(EXAMPLES_GEN); do \
		[ -d examples/$$e/api ] || continue; \
		echo "controller-gen examples/$$e"; \
		if [ -f examples/$$e/PROJECT ]; then \
			rm -rf examples/$$e/config/crd/bases examples/$$e/config/rbac/role.yaml; \
			$(CONTROLLER_GEN) object \
				crd:crdVersions=v1 rbac:roleName=manager-role paths=./examples/$$e/... \
				output:crd:artifacts:config=examples/$$e/config/crd/bases output:rbac:artifacts:config=examples/$$e/config/rbac; \
		else \
			rm -rf examples/$$e/config/crd examples/$$e/config/rbac; \
			$(CONTROLLER_GEN) object \
				crd:crdVersions=v1 rbac:roleName=$$e-operator paths=./examples/$$e/... \
				output:crd:artifacts:config=examples/$$e/config/crd output:rbac:artifacts:config=examples/$$e/config/rbac; \
		fi; \
	done
	@echo "crdcheck: the examples' CRDs as the API server checks them (schema, CEL rules and their estimated cost)"
	@$(GO) run ./crdtest/cmd/crdcheck $(foreach e,$(EXAMPLES_GEN),$(if $(wildcard examples/$(e)/PROJECT),examples/$(e)/config/crd/bases,examples/$(e)/config/crd))
	@echo "ops: alert rules, PrometheusRule, ServiceMonitor, metrics RBAC, Grafana dashboard"
	@cd ops && $(GO) run ./cmd/generate >/dev/null

DEMO_FLAGS ?=

# make demo and make test build every tool the README's recipes use:
# controller-gen too, which `make generate` (the kubebuilder recipe) needs.
.PHONY: demo
demo: testkit-bin $(CONTROLLER_GEN) ## Run the WebApp operator on a local cluster and walk through a WebApp's life (DEMO_FLAGS=-keep to look around after).
	$(GO) build -o $(BIN)/demo ./examples/webapp/cmd/demo
	KOPGO_TESTKIT_BIN=$(TESTKIT_BIN) $(BIN)/demo $(DEMO_FLAGS)

.PHONY: demo-external
demo-external: testkit-bin ## Run the DNSRecord operator (examples/dnsrecord) against a local control plane and its DNS provider: a record's life with drift, a rotated token and provider faults.
	$(GO) build -o $(BIN)/demo-external ./examples/dnsrecord/cmd/demo
	KOPGO_TESTKIT_BIN=$(TESTKIT_BIN) $(BIN)/demo-external

.PHONY: test
test: testkit-bin $(CONTROLLER_GEN) ## Run unit and integration tests (real kube-apiserver and etcd) with -race, the bench and ops modules' too.
	KOPGO_TESTKIT_BIN=$(TESTKIT_BIN) $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) ./...
	cd bench && KOPGO_TESTKIT_BIN=$(TESTKIT_BIN) $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) ./...
	cd ops && $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) ./...

RELIABILITY_N ?= 200
RELIABILITY_TIMEOUT ?= 60m

.PHONY: test-reliability
test-reliability: testkit-bin ## Run the reliability suite (test/reliability): RELIABILITY_N WebApps per scenario (default 200; 20 for the short variant), RELIABILITY_WRITE=1 writes its RESULTS.md.
	RELIABILITY_N=$(RELIABILITY_N) KOPGO_TESTKIT_BIN=$(TESTKIT_BIN) $(GO) test -race -count=1 -v -timeout $(RELIABILITY_TIMEOUT) ./test/reliability/...

# Parents per variant, one measurement per N; N:r measures that N in r
# rounds instead of BENCH_ROUNDS.
BENCH_SCALE ?= 500,2000,5000
BENCH_ROUNDS ?= 3

.PHONY: bench
bench: testkit-bin ## Measure kopgo against baselines on a local control plane at each N of BENCH_SCALE; writes bench/RESULTS.md and bench/scale.png (BENCH_SCALE, BENCH_ROUNDS).
	cd bench && KOPGO_TESTKIT_BIN=$(TESTKIT_BIN) BENCH_SCALE=$(BENCH_SCALE) BENCH_ROUNDS=$(BENCH_ROUNDS) $(GO) run . -out RESULTS.md

.PHONY: bench-micro
bench-micro: testkit-bin ## Run the packages' Go micro-benchmarks (go test -bench) against the real API server.
	KOPGO_TESTKIT_BIN=$(TESTKIT_BIN) $(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout $(TEST_TIMEOUT) ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint (config in .golangci.yml) on the library, the bench module and the ops module.
	$(GOLANGCI_LINT) run --allow-parallel-runners ./...
	cd bench && $(GOLANGCI_LINT) run --allow-parallel-runners --config ../.golangci.yml ./...
	cd ops && $(GOLANGCI_LINT) run --allow-parallel-runners --config ../.golangci.yml ./...

.PHONY: fmt
fmt: $(GOLANGCI_LINT) ## Format the code (gofmt and goimports through golangci-lint).
	$(GOLANGCI_LINT) fmt ./...
	cd bench && $(GOLANGCI_LINT) fmt --config ../.golangci.yml ./...

.PHONY: tidy
tidy: ## Tidy go.mod and go.sum of the library, the tools module, the bench module and the ops module.
	$(GO) mod tidy
	cd tools && $(GO) mod tidy
	cd bench && $(GO) mod tidy
	cd ops && $(GO) mod tidy

.PHONY: clean
clean: ## Remove built tools (bin/).
	rm -rf $(BIN)
