# modkind's two commands: `make run` (a local control plane and the quickstart) and `make test`.
SHELL := /bin/bash
GO ?= go
CONTROLLER_GEN_VERSION ?= v0.20.0

.PHONY: run test unit bench bench-scale testbin generate build

build:
	$(GO) build -o bin/modkind .

# Starts a local control plane (etcd + kube-apiserver, built once into ~/.cache/modkind), runs
# modkind against it and applies examples/quickstart. Ctrl-C stops everything.
run: build
	KUBEBUILDER_ASSETS="$$(hack/testbin.sh)" ./bin/modkind --quickstart examples/quickstart

# Builds (once, cached) or reuses the envtest binaries, OpenTofu and Crossplane, and runs every test,
# unit and integration; the integration suite of reconcile/ runs again with tofu instead of terraform.
test:
	assets="$$(hack/testbin.sh)" && tofu="$$(hack/tofu.sh)" && crossplane="$$(hack/crossplane.sh)" && \
	KUBEBUILDER_ASSETS="$$assets" MODKIND_CROSSPLANE="$$crossplane" $(GO) test ./... -count=1 -timeout 30m && \
	echo "== reconcile/ with OpenTofu ($$tofu)" && \
	KUBEBUILDER_ASSETS="$$assets" MODKIND_TERRAFORM="$$tofu" $(GO) test ./reconcile/ -count=1 -timeout 30m && \
	echo "== test provider and composition function (modules of their own)" && \
	$(GO) -C test/thingsprovider test ./... -count=1 && \
	MODKIND_TERRAFORM="$$tofu" $(GO) -C test/thingsprovider test ./... -count=1 && \
	$(GO) -C test/xfunction vet ./...

# Unit tests only: no API server, no terraform.
unit:
	$(GO) test ./module/ ./state/ -count=1 && $(GO) test ./crd/ -count=1 -skip 'APIServer|Terraform'

bench:
	assets="$$(hack/testbin.sh)" && KUBEBUILDER_ASSETS="$$assets" $(GO) test ./reconcile/ -run '^$$' -bench . -benchtime 1x -count=1 -timeout 30m

# Raw terraform's floor and modkind side by side on one API server: N instances (N=1000 for a
# thousand) created, updated, then idle for IDLE, with a terraform_data module and one using the
# things test provider. Prints wall time, CPU, terraform calls, idle cost and peak RSS, with ratios.
N ?= 100
IDLE ?= 3m
PARALLEL ?= 10
bench-scale: build
	assets="$$(hack/testbin.sh)" && KUBEBUILDER_ASSETS="$$assets" $(GO) run ./hack/benchscale -n $(N) -idle $(IDLE) -parallel $(PARALLEL) -modkind bin/modkind

testbin:
	@hack/testbin.sh

# Crossplane core for the end-to-end test (crossplane_test.go), built once into ~/.cache/modkind.
.PHONY: crossplane
crossplane:
	@hack/crossplane.sh

# Regenerates deepcopy functions and modkind's own CRDs from apis/, and the chart's copy of them.
generate:
	$(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION) object paths=./apis/... crd:crdVersions=v1 output:crd:dir=./apis/crds
	cp apis/crds/*.yaml charts/modkind/crds/
