# benchrun — the two commands people and CI rely on:
#   make demo   bring up the local cluster (unless KUBECONFIG points at one), build and import
#               the images, install benchrun, run examples/demo.yaml and print its results
#   make test   every test: unit, loopback load tests, repo consistency, the trend page in
#               headless Chromium, then the local cluster, its smoke test and the end-to-end
#               suite against the real operator
#
# Everything is built once in the release profile (tests included), into the target dir that
# hack/target-dir.sh picks (/var/cache/benchrun/target when writable, outside the repository so
# that CI clones reuse it; else ./target); the load generator's image alone in profile dist
# (thin LTO).

SHELL := /bin/bash
.ONESHELL:
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo
export PATH := $(HOME)/.cargo/bin:$(PATH)
ifndef CARGO_TARGET_DIR
CARGO_TARGET_DIR := $(shell hack/target-dir.sh)
endif
export CARGO_TARGET_DIR

.PHONY: cluster-guard all build crds lint unit browser cluster images stacks stacks-e2e stacks-test install smoke e2e e2e-run e2e-full e2e-pending comparisons-doc metrics-doc readme-check seeds seeds-again seeds-doc e2e-search e2e-schedule search-doc namespaced demo-repeat queue-load test demo clean-cluster help

help:
	@echo "make demo | make test | make build | make unit | make lint | make browser | make crds | make cluster | make images | make stacks | make stacks-e2e | make stacks-test | make install | make smoke | make e2e | make e2e-run | make e2e-full | make e2e-pending | make e2e-search | make e2e-schedule | make search-doc | make comparisons-doc | make metrics-doc | make readme-check | make seeds | make seeds-again | make namespaced | make demo-repeat | make queue-load"

all: build

## build: every binary of the workspace (operator, load generator, demo target, report plugin),
## and the load generator again in profile dist (thin LTO, for its image; Cargo.toml)
build:
	$(CARGO) build --release --workspace --bins
	$(CARGO) build --profile dist -p benchrun-load --bin benchrun-load

## crds: regenerate crds/, docs/api.md, docs/api-schedule.md and deploy/base/crd*.yaml from the Rust types
crds:
	$(CARGO) run --release -q -p benchrun-api --bin crdgen > crds/benchmarkrun.yaml
	$(CARGO) run --release -q -p benchrun-api --bin crdgen -- --markdown > docs/api.md
	cp crds/benchmarkrun.yaml deploy/base/crd.yaml
	$(CARGO) run --release -q -p benchrun-api --bin crdgen -- --schedule > crds/benchmarkschedule.yaml
	$(CARGO) run --release -q -p benchrun-api --bin crdgen -- --schedule --markdown > docs/api-schedule.md
	cp crds/benchmarkschedule.yaml deploy/base/crd-schedule.yaml

## lint: formatting and clippy with warnings as errors
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings

## unit: unit tests, loopback load-generator tests, repo-consistency tests and the stacks' own tests (no cluster)
unit: build
	$(CARGO) fmt --all -- --check
	$(CARGO) test --release --workspace
	tests/argocd/run.sh
	tests/stacks/unit.sh

## browser: the trend page (`kubectl benchrun trend -o FILE.html`) rendered from the fixture
## schedule and opened in headless Chromium (tests/report/chromium.sh: Debian's chromium,
## installed when missing, in a network namespace, so root); no cluster. `--workspace`, as in
## `unit`, so the test binary built there is reused.
browser:
	$(CARGO) test --release --workspace --test trend_browser -- --ignored --nocapture

## cluster: the local single-node Kubernetes (skipped when KUBECONFIG is set)
cluster:
	hack/cluster.sh up

## images: build and import the operator, load generator and demo target images (into the
## local cluster's containerd, which `cluster` brings up first on a machine without one)
images: build cluster
	if [ -n "$${KUBECONFIG:-}" ] && [ ! -S /run/containerd/containerd.sock ]; then
	  echo "images: KUBECONFIG points at an existing cluster; building archives only (push them to your registry)"
	  hack/images.sh --no-build --no-import
	else
	  hack/images.sh --no-build
	fi

## stacks: build the systems under test of stacks/ as images and import them (cached: seconds when
## unchanged); STACKS="a b" builds only those
STACKS ?=
stacks: cluster
	if [ -n "$${KUBECONFIG:-}" ] && [ ! -S /run/containerd/containerd.sock ]; then
	  echo "stacks: KUBECONFIG points at an existing cluster; building archives only (push them to your registry)"
	  hack/stacks.sh --no-import $(STACKS)
	else
	  eval "$$(hack/cluster.sh env)"
	  hack/stacks.sh $(STACKS)
	fi

## stacks-e2e: only the stacks whose images `make e2e` runs (E2E_STACKS)
E2E_STACKS ?= express couchdb couch-seed spring-mvc
stacks-e2e:
	$(MAKE) --no-print-directory stacks STACKS="$(E2E_STACKS)"

## stacks-test: every stack image on the cluster, every endpoint it implements checked
stacks-test: stacks build
	eval "$$(hack/cluster.sh env)"
	tests/stacks/stacks-test.sh

## install: install benchrun (CRD, RBAC, operator) from deploy/ and wait for it
install: images
	eval "$$(hack/cluster.sh env)"
	hack/install.sh

## cluster-guard: refuses a KUBECONFIG that is not the local cluster's (the suites force-delete
## pods and install the operator cluster-wide); BENCHRUN_TEST_FOREIGN_CLUSTER=yes opts in
cluster-guard:
	hack/cluster-guard.sh "make $(MAKECMDGOALS)"

## smoke: the local cluster's smoke test
smoke: cluster-guard cluster
	eval "$$(hack/cluster.sh env)"
	tests/smoke/cluster-smoke.sh

## e2e: the end-to-end suite against the operator on the cluster (some tests run the seed stacks'
## images), then the Prometheus client's live tests against the cluster's Prometheus (~2 min).
## The tests run at reduced sizes (shorter windows, fewer repeats; tests/e2e/support.rs `size`)
## and skip E2E_FULL_ONLY, whose checks of the operator other tests make (tests/e2e/seeds.rs).
# `--workspace`, not `-p benchrun`: the same feature set as `unit`, so the test binary built
# there is reused (with `-p` cargo unifies features differently and recompiles ~6 min in CI).
e2e: cluster-guard install stacks-e2e
	$(MAKE) --no-print-directory e2e-run

## e2e-run: e2e's tests alone, once `make install stacks-e2e` is done (tests/run-all.sh builds the
## other stacks meanwhile, at low CPU priority)
e2e-run: cluster-guard
	eval "$$(hack/cluster.sh env)"
	$(CARGO) test --release --workspace --test e2e -- --ignored --test-threads=1 --nocapture $(E2E_PENDING:%=--skip %) $(E2E_FULL_ONLY:%=--skip %)
	$(CARGO) test --release --workspace --test gauges_promql -- --ignored
	$(CARGO) test --release --workspace --test repo -- --ignored
	CARGO=$(CARGO) tests/prometheus-live.sh

## e2e-full: the end-to-end suite at the sizes its tests were written with (BENCHRUN_E2E_FULL=1:
## longer windows, more repeats, a minute-long Prometheus outage) and with E2E_FULL_ONLY, then
## the Prometheus client's live tests (not in `test`; about 15 min more than `make e2e`)
E2E_FULL_ONLY ?= seeds::seed_ steady::a_warm_up_until_steady $(SEARCH_FULL)
e2e-full: cluster-guard install stacks
	eval "$$(hack/cluster.sh env)"
	BENCHRUN_E2E_FULL=1 $(CARGO) test --release --workspace --test e2e -- --ignored --test-threads=1 --nocapture $(E2E_PENDING:%=--skip %)
	$(CARGO) test --release --workspace --test gauges_promql -- --ignored
	CARGO=$(CARGO) tests/prometheus-live.sh

## e2e-pending: the end-to-end tests written in the third wave that have not yet passed on the
## local cluster (E2E_PENDING below); `make e2e` skips them until they have, so a red test that
## was never run cannot hold back the rest. Each is listed in README's Status.
E2E_PENDING ?= seeds::finding_
e2e-pending: cluster-guard install stacks
	eval "$$(hack/cluster.sh env)"
	[ -n "$(strip $(E2E_PENDING))" ] || { echo "e2e-pending: nothing pending"; exit 0; }
	$(CARGO) test --release --workspace --test e2e -- --ignored --test-threads=1 --nocapture $(E2E_PENDING)

## e2e-search: the sizing searches at full size (issue 37's criterion: capacity at 250m and
## 500m to 5 %, the demand at 250m's capacity, a grid near each answer; ~25 min). `make e2e`
## skips it (E2E_FULL_ONLY) and runs the reduced search test instead.
SEARCH_FULL ?= search::capacity_at_two_cpu_limits_and_the_demand_at_the_first_ones_capacity search::a_capacity_search_with_too_few_connections_says_so
e2e-search: cluster-guard install
	eval "$$(hack/cluster.sh env)"
	$(CARGO) test --release --workspace --test e2e -- --ignored --test-threads=1 --nocapture --exact $(SEARCH_FULL)

## e2e-schedule: the scheduled-runs test at full size (issue 38's criterion: a schedule firing
## every minute, switched after 4 runs to 1.3x the work, historyLimit 5; ~9 min). `make e2e`
## runs it reduced: the first run by the cron expression, the rest by the trigger annotation.
e2e-schedule: cluster-guard install
	eval "$$(hack/cluster.sh env)"
	BENCHRUN_E2E_FULL=1 $(CARGO) test --release --workspace --test e2e -- --ignored --test-threads=1 --nocapture schedule::

## search-doc: `e2e-search` with its figures recorded in out/search/ and rendered into
## docs/experiments.md's "Sizing searches" by hack/search-doc.sh
search-doc: install
	eval "$$(hack/cluster.sh env)"
	rm -rf out/search && mkdir -p out/search
	echo "$$(git rev-parse --short HEAD)$$([ -z "$$(git status --porcelain --untracked-files=no)" ] || echo ' (with uncommitted changes)')" > out/search/commit
	BENCHRUN_E2E_RECORD=$(CURDIR)/out/search $(CARGO) test --release --workspace --test e2e -- --ignored --test-threads=1 --nocapture --exact $(SEARCH_FULL)
	hack/search-doc.sh out/search

## seeds: the five published comparisons of examples/seeds/ at local-cluster size, one after the
## other, results in out/seeds/ (~40 min; not in `test`; e2e-full runs all five reduced).
## SEEDS="2 5" runs some; SEEDS_ARGS=--published the published sizes (a bigger cluster). The small
## seeds fit the default two-node cluster. When all five ran, their result files (the runs as
## JSON, the manifest, the count checks) are copied to docs/seeds/results/ and docs/seeds.md is
## rendered from them (hack/seeds-doc.sh), never typed: commit both.
seeds: install stacks
	eval "$$(hack/cluster.sh env)"
	hack/seeds.sh $${SEEDS_ARGS:-} $${SEEDS:-}
	if [ -z "$${SEEDS:-}" ] && [ -z "$${SEEDS_ARGS:-}" ]; then
	  rm -rf docs/seeds/results docs/seeds/results-2 && mkdir -p docs/seeds/results
	  cp out/seeds/manifest.json out/seeds/*.run.json out/seeds/*.counts.txt docs/seeds/results/
	  $(MAKE) --no-print-directory seeds-doc
	fi

## seeds-again: all five seeds a second time on the commit of docs/seeds/results/ (refused on
## another commit), into docs/seeds/results-2/; docs/seeds.md then marks every claim whose
## verdict differs between the two runs as Unstable, with both results (~40 min; not in `test`).
seeds-again: install stacks
	eval "$$(hack/cluster.sh env)"
	want=$$(jq -r .commit docs/seeds/results/manifest.json)
	[ "$$want" = "$$(git rev-parse HEAD)" ] || { echo "seeds-again: docs/seeds/results is of $$want, HEAD is $$(git rev-parse HEAD): run make seeds first" >&2; exit 1; }
	hack/seeds.sh --out out/seeds-2
	rm -rf docs/seeds/results-2 && mkdir -p docs/seeds/results-2
	cp out/seeds-2/manifest.json out/seeds-2/*.run.json out/seeds-2/*.counts.txt docs/seeds/results-2/
	$(MAKE) --no-print-directory seeds-doc

## seeds-doc: docs/seeds.md from the committed result files of the last full `make seeds`
## (docs/seeds/results/) and the claims file; a unit test checks the page is exactly this.
seeds-doc:
	hack/seeds-doc.sh docs/seeds/results > docs/seeds.md.new && mv docs/seeds.md.new docs/seeds.md

## metrics-doc: rewrite docs/metrics.md's generated blocks (simulated coverage and power) from the
## unit tests that compute them; `make unit` fails when a block differs from what its test computes
metrics-doc:
	BENCHRUN_BLESS=1 $(CARGO) test --release -p benchrun-api --lib -- --test-threads=1 \
	  fresh_deployments_per_repeat adaptive_repeats_keep slower_comes_out
	BENCHRUN_BLESS=1 $(CARGO) test --release -p benchrun --lib -- --test-threads=1 \
	  twenty_identical_cells

## comparisons-doc: the two comparison e2e tests (a heavier path with adaptive repeats, two
## identical targets), their figures recorded in out/e2e/ and rendered into docs/metrics.md (~5 min)
comparisons-doc: install
	eval "$$(hack/cluster.sh env)"
	rm -rf out/e2e && mkdir -p out/e2e
	echo "$$(git rev-parse --short HEAD)$$([ -z "$$(git status --porcelain --untracked-files=no)" ] || echo ' (with uncommitted changes)')" > out/e2e/commit
	BENCHRUN_E2E_FULL=1 BENCHRUN_E2E_RECORD=$(CURDIR)/out/e2e $(CARGO) test --release --workspace --test e2e -- --ignored --test-threads=1 --nocapture comparisons::
	hack/comparisons-doc.sh out/e2e

## readme-check: the README's quick-start run applied as written, and the same run with no
## resources (the defaults); both must succeed (~8 min; not in `test`)
readme-check: install
	eval "$$(hack/cluster.sh env)"
	hack/readme-check.sh

## namespaced: the namespaced install (deploy/namespaced) in a restricted namespace (~3 min; not in `test`)
namespaced: install
	eval "$$(hack/cluster.sh env)"
	tests/smoke/namespaced-install.sh

## queue-load: what a queue of 300 runs (one measuring) costs the apiserver, in requests per
## minute from its own counter, and the operator's memory (~4 min; not in `test`). N=1000 for more;
## MODE=handovers for short runs that change hands during the reading (requests per hand-over,
## then how long deleting the namespace of queued runs takes)
queue-load: install
	eval "$$(hack/cluster.sh env)"
	hack/queue-load.sh $${N:-300} 60 $${MODE:-}

## demo-repeat: the demo run ten times, every cell checked for loadNodes (~55 min; not in `test`)
demo-repeat: install
	eval "$$(hack/cluster.sh env)"
	hack/demo-repeat.sh $${RUNS:-10}

## test: everything, cheapest first
test:
	tests/run-all.sh

## demo: the main job
demo:
	hack/demo.sh

clean-cluster:
	hack/cluster.sh down
