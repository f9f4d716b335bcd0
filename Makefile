# modkind's two commands: `make run` (a local control plane and the quickstart) and `make test`.
SHELL := /bin/bash
GO ?= go
CONTROLLER_GEN_VERSION ?= v0.20.0

.PHONY: run test unit bench bench-scale testbin generate build image push chart argocd argocd-examples
.PHONY: docs

build:
	$(GO) build -o bin/modkind .

# Starts a local control plane (--local: etcd + kube-apiserver, built once into ~/.cache/modkind),
# runs modkind against it and applies examples/quickstart. Ctrl-C stops everything.
run: build
	KUBEBUILDER_ASSETS="$$(hack/testbin.sh)" ./bin/modkind --local --quickstart examples/quickstart

# Downloads or builds (once, cached) or reuses the envtest binaries, kube-controller-manager, OpenTofu, Crossplane and the helm CLI, and runs every test,
# unit and integration; the integration suite of the controllers (reconcile/integration/) and terraform/ run again
# with tofu instead of terraform.
test:
	assets="$$(hack/testbin.sh)" && tofu="$$(hack/tofu.sh)" && crossplane="$$(hack/crossplane.sh)" && \
	kcm="$$(hack/controller-manager.sh)" && helm="$$(hack/helm.sh)" && chromium="$$(hack/chromium.sh)" && \
	KUBEBUILDER_ASSETS="$$assets" MODKIND_CROSSPLANE="$$crossplane" MODKIND_CONTROLLER_MANAGER="$$kcm" MODKIND_HELM="$$helm" MODKIND_CHROMIUM="$$chromium" $(GO) test ./... -count=1 -timeout 30m && \
	echo "== reconcile/integration/ and terraform/ with OpenTofu ($$tofu)" && \
	KUBEBUILDER_ASSETS="$$assets" MODKIND_TERRAFORM="$$tofu" $(GO) test ./reconcile/integration/ ./terraform/ -count=1 -timeout 30m && \
	echo "== test provider and composition function (modules of their own)" && \
	$(GO) -C test/thingsprovider test ./... -count=1 && \
	MODKIND_TERRAFORM="$$tofu" $(GO) -C test/thingsprovider test ./... -count=1 && \
	$(GO) -C test/xfunction vet ./... && \
	echo "== test node: pods as local processes, Jobs through kube-controller-manager" && \
	KUBEBUILDER_ASSETS="$$assets" MODKIND_CONTROLLER_MANAGER="$$kcm" $(GO) -C test/testnode test ./... -count=1

# Unit tests only: no API server, no terraform. The instance client's decisions
# (instance.TestInstanceDecisions) run here against a fake executor and a fake state store; the
# entry packages (cmd/...: the command line, the controller's flags, how a cluster is found, the
# runner's retries) and the import directions (internal/layers) are checked here too. The system
# tests (test/e2e) are not: `make test` runs them.
unit:
	$(GO) test ./apis/... ./kind/... ./runs/ ./slots/ ./state/ ./executor/... ./reconcile/ ./reconcile/kinds/ ./reconcile/modules/ ./reconcile/instance/ ./module/ ./rollout/ ./printable/ ./internal/... ./terraform/detached/ ./hack/ ./cmd/... ./dashboard/ -count=1 && \
	$(GO) test ./terraform/ -count=1 -skip 'TestDetachedTerraform|TestRunErrorsAsTerraformSaysThem|TestRunsInFlightIsSlotsHeld' && \
	$(GO) test ./crd/... -count=1 -skip 'APIServer|Terraform' && \
	$(GO) test ./artifact/ ./charts/ -count=1 -skip 'APIServer'

bench:
	assets="$$(hack/testbin.sh)" && KUBEBUILDER_ASSETS="$$assets" $(GO) test ./reconcile/integration/ -run '^$$' -bench . -benchtime 1x -count=1 -timeout 30m && \
	KUBEBUILDER_ASSETS="$$assets" $(GO) test ./dashboard/ -run '^$$' -bench . -benchtime 20x -count=1

# Raw terraform's floor and modkind side by side on one API server: N instances (N=1000 for a
# thousand) created, updated, then idle for IDLE, with a terraform_data module and one using the
# things test provider. Prints wall time, CPU, terraform calls, idle cost and peak RSS, with ratios.
# RUNNERS=process,job adds a column of modkind --runner job, whose Jobs run on a node of local
# processes (test/testnode) with kube-controller-manager, and what the runner pods cost.
N ?= 100
IDLE ?= 3m
PARALLEL ?= 10
RUNNERS ?= process
# More flags of hack/benchscale, e.g. for ten thousand instances:
# make bench-scale N=10000 BENCHFLAGS="-modules terraform_data -floor=false -shared-providers=false -update=false -restart"
BENCHFLAGS ?=
bench-scale: build
	assets="$$(hack/testbin.sh)" && kcm="$$(case ,$(RUNNERS), in *,job,*) hack/controller-manager.sh;; esac)" && \
	KUBEBUILDER_ASSETS="$$assets" MODKIND_CONTROLLER_MANAGER="$$kcm" $(GO) run ./hack/benchscale -n $(N) -idle $(IDLE) -parallel $(PARALLEL) -runners $(RUNNERS) -modkind bin/modkind $(BENCHFLAGS)

testbin:
	@hack/testbin.sh

# Crossplane core for the end-to-end test (test/e2e/crossplane_test.go), downloaded or built once into ~/.cache/modkind.
.PHONY: crossplane
crossplane:
	@hack/crossplane.sh

# Rewrites the generated tables of docs/ (the chart's values in docs/chart.md) from their sources.
docs:
	$(GO) run ./internal/docgen/cmd/docgen

# Regenerates deepcopy functions and modkind's own CRDs from apis/, and the chart's copy of them.
generate:
	$(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION) object paths=./apis/... crd:crdVersions=v1 output:crd:dir=./apis/crds
	cp apis/crds/*.yaml charts/modkind/crds/

# The container image, tagged $(IMAGE):$(VERSION). With a Docker daemon: the Dockerfile (OpenTofu
# from its GitHub release, checked against the release's SHA256SUMS; ENGINE=terraform for
# HashiCorp's terraform 1.11.4, BUSL-1.1). Without one: hack/image assembles the same layout as
# an OCI image layout in bin/image/oci, carrying IMAGE_TERRAFORM (a static linux terraform or tofu)
# or, when empty, the OpenTofu hack/tofu.sh downloads or builds; it has no git binary, modkind fetches git
# sources with go-git. LICENSES is modkind's own licence (org.opencontainers.image.licenses).
IMAGE ?= ghcr.io/modkind/modkind
VERSION ?= $(shell sed -n 's/^appVersion: *"*\([^"]*\)"*$$/\1/p' charts/modkind/Chart.yaml)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
LICENSES ?= Apache-2.0
IMAGE_TERRAFORM ?=
ENGINE ?= tofu

image:
	@if docker info >/dev/null 2>&1; then \
	  echo "image: building $(IMAGE):$(VERSION) with Docker" >&2; \
	  docker build --platform linux/amd64 --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) \
	    --build-arg LICENSES=$(LICENSES) --build-arg ENGINE=$(ENGINE) -t $(IMAGE):$(VERSION) . ; \
	else \
	  echo "image: no Docker daemon answers; assembling an OCI image layout in bin/image/oci" >&2; \
	  tf="$(IMAGE_TERRAFORM)"; if [ -z "$$tf" ]; then tf="$$(hack/tofu.sh)" || exit 1; fi; \
	  CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -ldflags "-s -w" -o bin/image/modkind . && \
	  SOURCE_DATE_EPOCH="$$(git log -1 --format=%ct 2>/dev/null || echo 0)" $(GO) run ./hack/image \
	    --modkind bin/image/modkind --terraform "$$tf" --out bin/image/oci --ref $(IMAGE):$(VERSION) \
	    --version $(VERSION) --revision "$(REVISION)" --licenses $(LICENSES); \
	fi

# Pushes the OCI layout `make image` wrote without Docker (bin/image/oci) to $(IMAGE):$(VERSION),
# with the credentials of `docker login` or `crane auth login`, and prints the reference by digest.
# (An image Docker built is pushed with `docker push $(IMAGE):$(VERSION)`.)
push:
	$(GO) run ./hack/push --layout bin/image/oci --to $(IMAGE):$(VERSION)

# Packages charts/modkind as bin/chart/modkind-$(VERSION).tgz, its version and appVersion
# $(VERSION): the chart installs the image of its own version.
chart:
	$(GO) run ./hack/chart --chart charts/modkind --version $(VERSION) --out bin/chart

# What Argo CD needs for GENERATED_GROUPS (comma-separated: the chart's generatedGroups) and the GitOps
# repository REPO's directory REPO_PATH: argocd-cm's health checks and an Application, in
# bin/argocd.yaml. argocd-examples writes examples/argocd/ from the same command.
GENERATED_GROUPS ?= *.example.org
REPO ?= https://git.example.com/platform/gitops.git
REPO_PATH ?= modkind
argocd:
	mkdir -p bin && $(GO) run ./hack/argocd --groups '$(GENERATED_GROUPS)' --repo '$(REPO)' --path '$(REPO_PATH)' > bin/argocd.yaml && echo bin/argocd.yaml

argocd-examples:
	mkdir -p bin && $(GO) run ./hack/argocd --groups '*.example.org' --repo https://git.example.com/platform/gitops.git --path modkind > bin/argocd-examples.yaml && \
	csplit -s -f bin/argocd-part bin/argocd-examples.yaml '/^---$$/' && \
	cp bin/argocd-part00 examples/argocd/argocd-cm.yaml && tail -n +2 bin/argocd-part01 > examples/argocd/application.yaml
