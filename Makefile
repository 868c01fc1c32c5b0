# The two commands of the README:
#   make demo   set everything up and run the main job
#   make test   set everything up and run every test
# Both run against $KUBECONFIG when it is set, else against the local test
# bed (tests/cluster), which they build and start themselves.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# The Ansibles the tests run on (NEWEST_*, OLDEST_*): .ci/versions.
include .ci/versions
comma := ,
# .ci/python finds each one: on PATH, else among pyenv's installs.
PYTHON ?= $(or $(shell .ci/python $(NEWEST_PYTHON)),python$(NEWEST_PYTHON))
VENV := $(CURDIR)/.venv
BIN := $(VENV)/bin
# The oldest Ansible that meta/runtime.yml promises, in a virtualenv of its own.
OLDEST_PYTHON_CMD ?= $(or $(shell .ci/python $(OLDEST_PYTHON)),python$(OLDEST_PYTHON))
OLDEST_VENV := $(CURDIR)/.venv-oldest
OLDEST_BIN := $(OLDEST_VENV)/bin
BUILD := $(CURDIR)/build
COLLECTIONS := $(BUILD)/collections
BED_BIN := $(shell bash -c 'source tests/cluster/lib.sh && echo $$BED_BIN')
WITH_BED := tests/with-bed

# The collection is found through a symlink, so edits are live; the bed's
# binaries are reached through variables, never through PATH.
export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS)
# Ansible's scratch files (and what Molecule or ansible-lint install) stay in
# build/, not in the user's ~/.ansible.
export ANSIBLE_HOME := $(BUILD)/ansible-home
export ANSIBLE_FORCE_COLOR ?= true
export ANSIBLE_CALLBACK_RESULT_FORMAT ?= yaml
export HELM3_BIN := $(BED_BIN)/helm3
export HELM4_BIN := $(BED_BIN)/helm4
export HELM_BIN ?= $(HELM3_BIN)
export KUBECTL_BIN ?= $(BED_BIN)/kubectl
export PATH := $(BIN):$(PATH)

SHELL_SCRIPTS := tests/cluster/build tests/cluster/up tests/cluster/down tests/cluster/status \
	tests/cluster/lib.sh tests/with-bed tests/sanity/run hacking/docs .ci/run .ci/python

.PHONY: help venv venv-oldest tools bed bed-up bed-down collection demo site-charts site test test-all unit integration integration-sites sanity sanity-oldest sanity-between unit-oldest integration-oldest test-oldest lint molecule publish-check \
	docs docs-lint \
	bench bench-bed bench-phase-lag bench-phase-scale bench-noop bench-greenfield bench-site bench-site-noop bench-compute-kit bench-release-upgrade clean \
	role-readmes ee ee-image

help:
	@echo "make demo        set up, then run the main job (playbooks/demo.yml)"
	@echo "make test        set up, then run unit, integration, sanity, lint, publish-check, docs and molecule tests"
	@echo "make ee          the collection tarball and the execution environment's build context"
	@echo "make bed-up      build and start the local test bed; make bed-down stops it"
	@echo "make docs        build the docsite in build/docs/build/html (make docs-lint: lint its sources)"
	@echo "make bench       every speed measurement against its target, in one run (ANCHOR=<rev> beside it)"
	@echo "make bench-bed, bench-phase-lag, bench-phase-scale, bench-noop, bench-greenfield, bench-site, bench-site-noop, bench-compute-kit, bench-release-upgrade   the measurements in docs/benchmarks.md"
	@echo "KUBECONFIG=...   point either command at an existing cluster instead of the bed"

# A virtualenv on another Python than .ci/versions names (an older checkout's)
# is made again, not upgraded in place.
same_python = $(1)/bin/python -c 'import sys; sys.exit("%d.%d" % sys.version_info[:2] != "$(2)")' 2>/dev/null

# The newest Ansible: requirements-dev.txt pins the `ansible` and ansible-core
# of .ci/versions (tests/tooling/test_ansible_versions.py).
venv: $(VENV)/.installed
$(VENV)/.installed: requirements.txt requirements-dev.txt .ci/versions
	@echo "==> Python virtualenv in $(VENV) (ansible $(NEWEST_ANSIBLE), ansible-core $(NEWEST_CORE), Python $(NEWEST_PYTHON))"
	$(call same_python,$(VENV),$(NEWEST_PYTHON)) || { rm -rf $(VENV); $(PYTHON) -m venv $(VENV); }
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

# The oldest Ansible: requirements-dev.txt but its two Ansible pins, the
# oldest ansible-core instead, then the kubernetes.core of OLDEST_ANSIBLE
# (the package without its dependencies: it asks for a later ansible-core).
venv-oldest: $(OLDEST_VENV)/.installed
$(OLDEST_VENV)/.installed: requirements.txt requirements-dev.txt .ci/versions
	@echo "==> Python virtualenv in $(OLDEST_VENV) (ansible-core $(OLDEST_CORE), kubernetes.core of ansible $(OLDEST_ANSIBLE), Python $(OLDEST_PYTHON))"
	$(call same_python,$(OLDEST_VENV),$(OLDEST_PYTHON)) || { rm -rf $(OLDEST_VENV); $(OLDEST_PYTHON_CMD) -m venv $(OLDEST_VENV); }
	@mkdir -p $(BUILD)
	grep -vE '^(-r |ansible(-core)?[<>=~! ])' requirements-dev.txt > $(BUILD)/requirements-oldest.txt
	$(OLDEST_BIN)/pip install --quiet --upgrade pip
	$(OLDEST_BIN)/pip install --quiet -r requirements.txt -r $(BUILD)/requirements-oldest.txt "ansible-core==$(OLDEST_CORE)"
	$(OLDEST_BIN)/pip install --quiet --no-deps "ansible==$(OLDEST_ANSIBLE)"
	$(OLDEST_BIN)/python -c 'import ansible.release as r, sys; sys.exit(r.__version__ != "$(OLDEST_CORE)" and "ansible-core is " + r.__version__)'
	touch $@

# System tools the tests use beyond Python and Go.
tools:
	@command -v shellcheck >/dev/null || { \
	  echo "==> installing shellcheck"; \
	  command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] || { echo "install shellcheck (it lints the bed's scripts)"; exit 1; }; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck >/dev/null; }

collection: venv
	@mkdir -p $(COLLECTIONS)/ansible_collections/lcm
	@ln -sfn $(CURDIR) $(COLLECTIONS)/ansible_collections/lcm/openstack

# Build the bed's binaries (a no-op once cached), even when KUBECONFIG is set:
# helm and kubectl come from the same cache.
bed:
	tests/cluster/build

bed-up: bed
	tests/cluster/up

bed-down:
	tests/cluster/down

# The stock openstack-helm charts of examples/site, each copied beside
# helm-toolkit with its dependencies built, under build/openstack-helm/ (the
# tests use the same copies). SITE_CHARTS: where the charts are.
SITE_CHARTS ?= $(CURDIR)/../shared/charts/openstack-helm
# The values files openstack-helm ships per OpenStack release are read where
# they are, through a link beside the charts (the inventories name them there).
SITE ?= site
SITE_SERVICES = $(shell sed -n 's/^        \([a-z0-9-]*\):$$/\1/p' examples/$(SITE)/inventory.yml)
site-charts: venv bed
	PYTHONPATH=tests $(WITH_BED) $(BIN)/python -m support.openstack_helm --source $(SITE_CHARTS) $(SITE_SERVICES)
	ln -sfn $(SITE_CHARTS)/values_overrides $(BUILD)/openstack-helm/values_overrides

# The example site, in dependency order (make site ARGS=--check for the plan).
site: collection bed site-charts
	$(WITH_BED) $(BIN)/ansible-playbook -i examples/$(SITE) playbooks/site.yml --forks $(words $(SITE_SERVICES)) $(ARGS)

demo: collection bed
	$(WITH_BED) $(BIN)/ansible-playbook -i examples/inventory.yml playbooks/demo.yml

# venv-oldest before the suites: two of them, side by side, run on it.
test: collection venv-oldest tools bed
	$(WITH_BED) $(MAKE) --no-print-directory test-all

# Every suite runs, even after a failure, and the summary says which failed.
# Unit tests go first (seconds, and a broken engine shows there). Then the two
# suites on the cluster run side by side, each in its own namespaces, while
# sanity and lint (CPU, no cluster) run after one another beside them: most of
# a cluster test's time is spent waiting for the control plane, not computing.
# The oldest Ansible's share (.ci/versions) joins them: its integration file
# after the whole sites, its unit tests and the sanity of the older series
# after lint.
# Each line of a suite's output carries its name; each suite's whole log is in
# build/test-logs/ too, and the summary quotes each failure with the lines after
# it (an Ansible failure's message follows its "fatal:" line). TEST_SERIAL=1
# runs them one after another instead.
TEST_LOGS := $(BUILD)/test-logs
test-all:
	@mkdir -p $(TEST_LOGS); failed=(); \
	echo "==> unit"; \
	if $(MAKE) --no-print-directory unit; then echo "==> unit: passed"; else failed+=(unit); echo "==> unit: FAILED"; fi; \
	groups=("integration" "integration-sites integration-oldest" "molecule" \
	  "sanity lint publish-check docs-lint docs unit-oldest sanity-oldest sanity-between"); \
	run_group() { \
	  local t rc=0; \
	  for t in $$1; do \
	    echo "==> $$t"; \
	    if $(MAKE) --no-print-directory $$t 2>&1 | tee $(TEST_LOGS)/$$t.log | sed -u "s/^/[$$t] /"; \
	    then echo "==> $$t: passed"; else echo "==> $$t: FAILED"; echo "$$t" >> $(TEST_LOGS)/failed; rc=1; fi; \
	  done; return $$rc; }; \
	rm -f $(TEST_LOGS)/failed; pids=(); \
	for g in "$${groups[@]}"; do \
	  if [[ "$${TEST_SERIAL:-0}" == 1 ]]; then run_group "$$g" || true; else run_group "$$g" & pids+=($$!); fi; \
	done; \
	for p in "$${pids[@]}"; do wait "$$p" || true; done; \
	[[ -f $(TEST_LOGS)/failed ]] && mapfile -t -O "$${#failed[@]}" failed < $(TEST_LOGS)/failed; \
	for t in "$${failed[@]}"; do [[ -f $(TEST_LOGS)/$$t.log ]] || continue; \
	  echo "==> $$t: the failures in its log ($(TEST_LOGS)/$$t.log)"; \
	  sed "s/\x1b\[[0-9;]*m//g" $(TEST_LOGS)/$$t.log | grep -a -n -E -A 8 "CRITICAL|fatal: \[|FAILED|Error:" | tail -n 80; done; \
	if (( $${#failed[@]} )); then echo "FAILED: $${failed[*]}"; exit 1; fi; \
	echo "all suites passed: unit $${groups[*]}"

unit: collection
	$(BIN)/pytest tests/unit tests/tooling
	cd tests/cluster && GOFLAGS="-mod=readonly -buildvcs=false" go test ./cmd/bedlet/

# The whole-site tests (each deploys a site of stock charts and takes it
# through its flows, or the compute kit with plain Helm) run beside the other
# integration tests, as a suite of their own: most of their time is the bed's
# control plane at work, and one after another the two compute kits never
# meet (one cluster holds one nova).
SITE_TESTS := tests/integration/test_site.py tests/integration/test_compute_kit_site.py \
	tests/integration/test_bed_compute_kit.py
integration: collection
	$(WITH_BED) $(BIN)/pytest --durations=20 tests/integration $(addprefix --ignore=,$(SITE_TESTS))

integration-sites: collection
	$(WITH_BED) $(BIN)/pytest --durations=20 -p no:cacheprovider $(SITE_TESTS)

# ansible-test sanity per ansible-core series (tests/sanity/run SERIES), each
# with tests/sanity/ignore-<series>.txt: sanity on the newest, sanity-oldest
# on the oldest (with its Python), sanity-between on each series between them.
series = $(basename $(1))
sanity: collection
	tests/sanity/run $(call series,$(NEWEST_CORE))

sanity-oldest: collection venv-oldest
	tests/sanity/run $(call series,$(OLDEST_CORE))

sanity-between: collection
	@for s in $(call series,$(subst $(comma), ,$(BETWEEN_CORES))); do echo "==> sanity $$s"; tests/sanity/run $$s || exit 1; done

# The oldest Ansible's share of make test: unit tests, sanity, and one
# integration test file that takes stock openstack-helm charts through
# greenfield, update, rollback and remove with the shipped playbooks.
OLDEST_INTEGRATION := tests/integration/test_openstack_helm_flows.py
unit-oldest: collection venv-oldest
	PATH=$(OLDEST_BIN):$$PATH $(OLDEST_BIN)/pytest -p no:cacheprovider tests/unit tests/tooling

integration-oldest: collection venv-oldest
	@$(OLDEST_BIN)/ansible --version | head -1
	PATH=$(OLDEST_BIN):$$PATH $(WITH_BED) $(OLDEST_BIN)/pytest --durations=10 -p no:cacheprovider $(OLDEST_INTEGRATION)

test-oldest: unit-oldest sanity-oldest integration-oldest

# galaxy-importer on the built tarball, offline, in a virtualenv of its own
# (its pins would take .venv's linters back): tests/support/galaxy_import.py.
PUBLISH_VENV := $(CURDIR)/.venv-publish
$(PUBLISH_VENV)/.installed: tests/publish/requirements.txt requirements-dev.txt .ci/versions
	@echo "==> galaxy-importer virtualenv in $(PUBLISH_VENV)"
	$(call same_python,$(PUBLISH_VENV),$(NEWEST_PYTHON)) || { rm -rf $(PUBLISH_VENV); $(PYTHON) -m venv $(PUBLISH_VENV); }
	$(PUBLISH_VENV)/bin/pip install --quiet --upgrade pip
	$(PUBLISH_VENV)/bin/pip install --quiet -r tests/publish/requirements.txt "$$(grep -E '^ansible-core' requirements-dev.txt)"
	touch $@

publish-check: collection $(PUBLISH_VENV)/.installed
	cd tests && $(BIN)/python -m support.galaxy_import --importer $(PUBLISH_VENV)

lint: collection tools
	$(BIN)/ansible-lint --profile production
	shellcheck -x -P SCRIPTDIR $(SHELL_SCRIPTS)

molecule: collection
	$(WITH_BED) $(BIN)/molecule test --all

# The execution environment (execution-environment.yml): the collection
# tarball under the versionless name the definition copies, then the build
# context; an error, not ansible-builder's "Complete!", when the context
# lacks the tarball. ee-image builds the image (podman or docker).
VERSION := $(shell sed -n 's/^version: *//p' galaxy.yml)
EE_FILE ?= execution-environment.yml
EE_DIR ?= $(BUILD)/ee
EE_TAG ?= lcm-openstack-ee:$(VERSION)
ee: venv
	rm -rf $(EE_DIR) && mkdir -p $(EE_DIR)
	$(BIN)/ansible-galaxy collection build $(CURDIR) --output-path $(EE_DIR) --force
	mv $(EE_DIR)/lcm-openstack-$(VERSION).tar.gz $(EE_DIR)/lcm-openstack.tar.gz
	$(BIN)/ansible-builder create -f $(EE_FILE) --context $(EE_DIR)/context --output-filename Containerfile \
	  | tee $(EE_DIR)/create.log
	@if grep -q "No matches" $(EE_DIR)/create.log || [[ ! -f $(EE_DIR)/context/_build/collections/lcm-openstack.tar.gz ]]; then \
	  echo "the build context lacks the collection tarball (additional_build_files of $(EE_FILE))" >&2; exit 1; fi

# EE_CORE=2.19.14 builds the image on that ansible-core instead of the
# definition's (the newest of .ci/versions), through the build argument the
# Containerfile installs ansible-core and ansible-runner from.
EE_CORE ?=
EE_RUNNER = $(shell sed -n 's/^ansible-runner==//p' requirements-dev.txt)
ee-image: ee
	$(BIN)/ansible-builder build -f $(EE_FILE) --context $(EE_DIR)/context -t $(EE_TAG) \
	  $(if $(EE_CORE),--build-arg "ANSIBLE_INSTALL_REFS=ansible-core==$(EE_CORE) ansible-runner==$(EE_RUNNER)")

# Each role's README lists its variables from meta/argument_specs.yml
# (tests/tooling/test_role_readmes.py fails when one is out of date).
role-readmes: venv
	cd tests && $(BIN)/python -m support.role_readme

# The docsite (antsibull-docs, in build/docs-venv from requirements-docs.txt):
# docs-lint checks the plugin and role docs and the guides; docs writes the
# guides' RST from the Markdown and builds the site in build/docs/build/html.
docs-lint: collection
	hacking/docs lint

docs: collection
	hacking/docs build

# Measurements for docs/benchmarks.md; never part of make test.
bench-bed: collection bed
	bench/bed.sh $(BENCH_ARGS)

# Every speed measurement in one interleaved run, against its target; writes
# build/bench/speed-<date>.json and .md. BENCH_ARGS=--quick for a smoke run,
# BENCH_ARGS="--only lag,noop" for some items.
bench: collection bed
	$(WITH_BED) $(BIN)/python bench/speed.py $(if $(RUNS),--runs $(RUNS)) $(if $(ANCHOR),--anchor $(ANCHOR)) $(BENCH_ARGS)

bench-phase-lag: collection bed
	$(WITH_BED) $(BIN)/python bench/phase_lag.py --runs $(or $(RUNS),10)

# ANCHOR=<revision> measures it beside this tree, interleaved.
bench-phase-scale: collection bed
	$(WITH_BED) $(BIN)/python bench/phase_scale.py --runs $(or $(RUNS),1) $(if $(ANCHOR),--anchor $(ANCHOR))

bench-noop: collection bed
	$(WITH_BED) $(BIN)/python bench/noop.py --runs $(or $(RUNS),5) $(if $(ANCHOR),--anchor $(ANCHOR))

bench-greenfield: collection bed
	$(WITH_BED) $(BIN)/python bench/greenfield.py --runs $(or $(RUNS),3) $(if $(ANCHOR),--anchor $(ANCHOR))

# A synthetic site of 30 services in 4 levels; BENCH_ARGS=--services 8 --depth 3 for a small one.
bench-site: collection bed
	$(WITH_BED) $(BIN)/python bench/site.py --runs $(or $(RUNS),1) $(BENCH_ARGS)

# A site at rest (6 and 12 services) planned again: the plan reading each release for drift
# against the versions alone; BENCH_ARGS=--sizes 6 for one size.
bench-site-noop: collection bed
	$(WITH_BED) $(BIN)/python bench/site_noop.py --runs $(or $(RUNS),3) $(BENCH_ARGS)

# The compute kit (examples/compute-kit) deployed by playbooks/site.yml against its critical path.
bench-compute-kit: collection bed
	$(WITH_BED) $(BIN)/python bench/compute_kit.py --runs $(or $(RUNS),1)

# The compute kit's upgrade 2025.2 -> 2026.1 against its ordered critical path, and
# keystone-api's ready endpoints over keystone's updates, update_strategy rolling
# against drain (RUNS updates each, alternating). BENCH_ARGS="--only endpoints" for one part.
bench-release-upgrade: collection bed
	$(WITH_BED) $(BIN)/python bench/release_upgrade.py --runs $(or $(RUNS),2) $(BENCH_ARGS)

clean:
	rm -rf $(BUILD) .pytest_cache
