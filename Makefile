# One command for the tests, on a laptop (with Docker, or a local PostgreSQL with
# pgvector) or in CI; see scripts/test.
.PHONY: test
test:
	scripts/test

# golangci-lint with .golangci.yml, installed at its pinned version when missing.
.PHONY: lint
lint:
	scripts/lint

# The tests on a real Citus cluster: a coordinator and two workers on local ports
# (scripts/citus-cluster; Citus is built from ../shared/vendor/citus when missing). The
# whole suite runs against the coordinator, with the tests built with the citus tag (the
# router proofs, which fail without a cluster): every package that talks to the database,
# the pipelines' workers on pools where any multi-shard query fails
# (citus.multi_task_query_log_level = error, see pipelinetest). Without -race:
# `make test` races the same code on one node, and the race detector would double the
# cluster's run on a 2-core machine. Schemas are reused between tests (internal/dbtest).
.PHONY: test-citus
test-citus:
	scripts/citus-cluster up
	CREDO_TEST_DATABASE_URL="$$(scripts/citus-cluster url)" go test -count=1 -timeout 20m -tags citus \
		-skip '^TestCitusNodeFailure$$' ./...
	# It stops a worker node: alone, after the others.
	CREDO_TEST_DATABASE_URL="$$(scripts/citus-cluster url)" go test -count=1 -tags citus -run '^TestCitusNodeFailure$$' ./extract

# The router proofs alone (the tests built with the citus tag), a minute where the whole
# suite takes six: for work on a statement's distribution.
CITUS_PACKAGES = $(shell grep -rl --include='*_test.go' '^//go:build citus' . | xargs -n1 dirname | sort -u)
.PHONY: test-citus-router
test-citus-router:
	scripts/citus-cluster up
	CREDO_TEST_DATABASE_URL="$$(scripts/citus-cluster url)" go test -race -count=1 -tags citus -run '^TestCitus' \
		-skip '^TestCitusNodeFailure$$' $(CITUS_PACKAGES)
	# It stops a worker node: alone, after the others.
	CREDO_TEST_DATABASE_URL="$$(scripts/citus-cluster url)" go test -race -count=1 -tags citus -run '^TestCitusNodeFailure$$' ./extract
