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
# (scripts/citus-cluster; Citus is built from ../shared/vendor/citus when missing). Every
# test built with the citus tag runs against the coordinator; without a cluster they fail.
CITUS_PACKAGES = $(shell grep -rl --include='*_test.go' '^//go:build citus' . | xargs -n1 dirname | sort -u)
.PHONY: test-citus
test-citus:
	scripts/citus-cluster up
	CREDO_TEST_DATABASE_URL="$$(scripts/citus-cluster url)" go test -race -count=1 -tags citus -run '^TestCitus' \
		-skip '^TestCitusNodeFailure$$' $(CITUS_PACKAGES)
	# It stops a worker node: alone, after the others.
	CREDO_TEST_DATABASE_URL="$$(scripts/citus-cluster url)" go test -race -count=1 -tags citus -run '^TestCitusNodeFailure$$' ./extract
