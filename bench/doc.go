// Package bench holds credo's benchmarks: cost per episode, prompt size against memory
// size, pipeline throughput, LLM-bound throughput and read latency, against the real
// PostgreSQL and the wire-level fake LLM. See BENCHMARKS.md for the command and results.
package bench
