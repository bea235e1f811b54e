// Package reliability holds credo's end-to-end reliability tests.
package reliability
