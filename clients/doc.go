// Package clients holds credo's client libraries for Python (clients/python) and
// TypeScript (clients/typescript). Its test runs each client's own suite and example
// against a real worker: River on the test PostgreSQL, the HTTP API, and the wire-level
// fake model scripted so that every answer the suites check is known in advance.
package clients
