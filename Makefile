# apiloom developer loop. `make help` lists the targets.
SHELL := bash
GO ?= go
BIN := bin

.PHONY: help run build generate verify test test-short fuzz bench load bench-peer h2spec interop clean crd-conformance conformance test-rbac-peer test-postgres test-mysql robustness robustness-ci

help: ## show targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

# Flags for the server, e.g. make run ARGS="--secure-port 7443"
# (bin/apiloom --help lists them; a later flag wins, --data-dir too).
ARGS ?=

run: build ## build and start the server on embedded etcd (kubeconfig: .apiloom/kubeconfig); ARGS="--secure-port 7443" passes flags
	$(BIN)/apiloom --data-dir .apiloom $(ARGS)

build: ## build bin/apiloom
	$(GO) build -o $(BIN)/apiloom ./cmd/apiloom

generate: ## regenerate everything derived from apis/
	hack/update-codegen.sh

verify: ## fail if generated code is stale, code is not gofmt-clean, or go vet complains
	hack/verify.sh

test: ## the whole test suite as CI runs it, with the race detector: e2e twice (our HTTP/2 and Go's), kubectl and h2spec required
	GO=$(GO) hack/test.sh

test-short: ## the suite without the race detector (a developer's loop: tests lacking kubectl or h2spec skip)
	$(GO) test -timeout 15m ./...

fuzz: ## run every fuzz target for a short while
	hack/fuzz.sh 20s

bench: ## Go benchmarks for the hot paths, what dynamic admission costs a create (test/admissionbench), and what encryption, audit, tracing, snapshots, migration and delete-collection workers cost (test/opsbench)
	$(GO) test -run '^$$' -bench . -benchmem ./server/... ./test/admissionbench/ ./test/opsbench/

clean: ## remove build output and the local data directory
	rm -rf $(BIN) .apiloom

load: ## load figures for issue #4 (PEER=1 adds --watch-cache=false and kube-apiserver side by side)
	hack/load.sh

bench-peer: ## the load suite against apiloom and kube-apiserver + CRD (../shared/peers) in one run, with ratios and charts (TARGETS= to change the set; docs/benchmarks.md)
	PEER=1 TARGETS="$${TARGETS:-apiloom kube-apiserver}" hack/load.sh

h2spec: ## HTTP/2 conformance suite (h2spec) against server/internal/h2, verbose; builds h2spec via the Go module proxy (make test runs it too)
	APILOOM_CI=1 H2SPEC=1 $(GO) test -count=1 -run '^TestH2Spec$$' -v ./server/internal/h2/

interop: ## curl (HTTP/2, HTTP/1.1), nghttp, h2load and Go's client against a real server, both --http2-server settings (needs nghttp2-client)
	hack/interop.sh

crd-conformance: ## a real kube-apiserver serving controller-gen's CRD of apis/crdconf answers the table test/crdconf/testdata/cases.yaml (recorded in golden.yaml), then apiloom is compared with it
	GO=$(GO) hack/crd-conformance.sh

.PHONY: builtin-conformance
builtin-conformance: ## a real kube-apiserver with kube-controller-manager answers the built-in kinds' table test/builtinconf/testdata/cases.yaml (recorded in golden.yaml), then apiloom is compared with it
	GO=$(GO) hack/builtin-conformance.sh

test-postgres: ## the storage and watch cache suites and the end-to-end core (kubectl, clientset, informers, watch fan-out) on kine over a real PostgreSQL (installed from Debian when missing, run on a unix socket)
	GO=$(GO) hack/test-postgres.sh

test-mysql: ## the storage and watch cache suites on kine over a real MySQL (Debian's MariaDB, installed when missing, run on a unix socket)
	GO=$(GO) hack/test-mysql.sh

.PHONY: test-helm
test-helm: ## Helm v3 and v4 (built from the module proxy by hack/ensure-helm.sh, cached) install, upgrade, roll back and uninstall a chart of built-in and example kinds against a real server (test/helm, docs/helm.md)
	helm=($$(GO=$(GO) hack/ensure-helm.sh)) && cd test/helm && \
	  APILOOM_CI=1 APILOOM_HELM3=$${helm[0]} APILOOM_HELM4=$${helm[1]} $(GO) test -race -count=1 -timeout 15m ./...

conformance: ## Kubernetes' own e2e tests (test/conformance/tests.txt, upstream's test/e2e built once and cached) against a real apiloom on embedded etcd, with JSON and protobuf clients; prints N passed, M failed
	GO=$(GO) hack/conformance.sh

test-rbac-peer: ## differential RBAC test: a real kube-apiserver (--authorization-mode=RBAC) and server/authz/rbac decide a generated matrix of roles, bindings and requests alike
	GO=$(GO) hack/rbac-peer.sh

robustness: ## fault-injection suite (issue 17, docs/robustness.md): a 3-member etcd cluster and two apiloom replicas as processes, every scenario (kills, pauses, partitions, delays, half-open connections, storage faults, controllers under failover, planted bugs) under traffic, every checker; prints each scenario's figures (ports 18400-18499)
	GO=$(GO) hack/robustness.sh

# The scenarios CI runs (.ci/run), about 5 minutes: a checker per planted
# bug, and one scenario per fault family.
ROBUSTNESS_CI_RUN ?= ^(TestPlanted.*|TestKillEtcdLeader|TestKillReplica|TestPartitionReplicaMember|TestNetworkPartition)$$

robustness-ci: ## the subset of make robustness that CI runs (under 10 minutes)
	GO=$(GO) hack/robustness.sh -run '$(ROBUSTNESS_CI_RUN)'
