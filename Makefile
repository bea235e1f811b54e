# One command for the tests, on a laptop (with Docker, or a local PostgreSQL with
# pgvector) or in CI; see scripts/test.
.PHONY: test
test:
	scripts/test
