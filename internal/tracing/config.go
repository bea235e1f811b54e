package tracing

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The variables that turn tracing on or off and that credo reads itself; the SDK reads
// the rest of the standard ones (endpoint details, headers, timeouts, sampler, batching,
// resource) from the process environment.
const (
	EnvSDKDisabled    = "OTEL_SDK_DISABLED"
	EnvExporter       = "OTEL_TRACES_EXPORTER"
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	// EnvRecordScope, credo's own, adds the scope (a user id) to the spans that work on one.
	EnvRecordScope = "OTEL_CREDO_RECORD_SCOPE"
)

// Variables are the variables docker-compose.yml hands to the worker, so that setting
// them in the shell turns tracing on there too: those above, and the common ones the SDK
// reads.
var Variables = []string{
	EnvSDKDisabled, EnvExporter, EnvEndpoint, EnvTracesEndpoint, EnvProtocol, EnvTracesProtocol,
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
	"OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG", EnvRecordScope,
}

// DefaultService is service.name when neither OTEL_SERVICE_NAME nor
// OTEL_RESOURCE_ATTRIBUTES names one.
const DefaultService = "credo"

// Config configures tracing.
type Config struct {
	// Enabled exports spans. FromEnv sets it when an OTLP endpoint or an exporter other
	// than none is named, and OTEL_SDK_DISABLED is not true.
	Enabled bool
	// RecordScope keeps the scope in the spans that work on one (OTEL_CREDO_RECORD_SCOPE);
	// without it the attribute is dropped before export.
	RecordScope bool
	// Service is service.name when the environment names none; DefaultService when empty.
	Service string
	// Exporter, when set, receives the spans instead of the exporter the environment
	// names (tests give tracetest's in-memory one); it enables tracing.
	Exporter sdktrace.SpanExporter
	// getenv is where FromEnv read the variables, for validate.
	getenv func(string) string
}

// FromEnv reads the configuration from getenv (nil: the process environment).
func FromEnv(getenv func(string) string) Config {
	if getenv == nil {
		getenv = os.Getenv
	}
	c := Config{getenv: getenv}
	exporter := strings.TrimSpace(getenv(EnvExporter))
	endpoint := getenv(EnvEndpoint) != "" || getenv(EnvTracesEndpoint) != ""
	c.Enabled = !isTrue(getenv(EnvSDKDisabled)) && exporter != "none" && (exporter != "" || endpoint)
	c.RecordScope = isTrue(getenv(EnvRecordScope))
	return c
}

func isTrue(v string) bool {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && b
}

func (c Config) withDefaults() Config {
	if c.Service == "" {
		c.Service = DefaultService
	}
	if c.Exporter != nil {
		c.Enabled = true
	}
	return c
}

// validate refuses what the SDK would take quietly or fail on only at the first export.
func (c Config) validate() error {
	if c.getenv == nil {
		return nil
	}
	for _, name := range []string{EnvSDKDisabled, EnvRecordScope} {
		if v := strings.TrimSpace(c.getenv(name)); v != "" {
			if _, err := strconv.ParseBool(v); err != nil {
				return fmt.Errorf("%s: %q is not true or false", name, v)
			}
		}
	}
	if !c.Enabled {
		return nil
	}
	if err := c.validateSampler(); err != nil {
		return err
	}
	if c.Exporter != nil {
		return nil
	}
	if v := strings.TrimSpace(c.getenv(EnvExporter)); v != "" && v != "otlp" && v != "console" {
		return fmt.Errorf("%s: %q is not otlp, console or none", EnvExporter, v)
	}
	for _, name := range []string{EnvProtocol, EnvTracesProtocol} {
		if v := c.getenv(name); v != "" && v != "grpc" && v != "http/protobuf" && v != "http/json" {
			return fmt.Errorf("%s: %q is not grpc, http/protobuf or http/json", name, v)
		}
	}
	return nil
}

// The sampler variables. The SDK reads them itself, but only warns about a value it does
// not know and then samples every trace: credo refuses it at start instead.
const (
	EnvSampler    = "OTEL_TRACES_SAMPLER"
	EnvSamplerArg = "OTEL_TRACES_SAMPLER_ARG"
)

// samplers are the values of OTEL_TRACES_SAMPLER the Go SDK implements; ratio ones
// take OTEL_TRACES_SAMPLER_ARG, a ratio from 0 to 1.
var samplers = map[string]bool{
	"always_on": false, "always_off": false, "traceidratio": true,
	"parentbased_always_on": false, "parentbased_always_off": false, "parentbased_traceidratio": true,
}

func (c Config) validateSampler() error {
	v := strings.ToLower(strings.TrimSpace(c.getenv(EnvSampler)))
	if v == "" {
		return nil
	}
	ratio, ok := samplers[v]
	if !ok {
		return fmt.Errorf("%s: %q is not always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio", EnvSampler, v)
	}
	if arg := strings.TrimSpace(c.getenv(EnvSamplerArg)); ratio && arg != "" {
		if f, err := strconv.ParseFloat(arg, 64); err != nil || f < 0 || f > 1 {
			return fmt.Errorf("%s: %q is not a ratio from 0 to 1", EnvSamplerArg, arg)
		}
	}
	return nil
}

// httpJSON says the OTLP exporter is to send JSON over HTTP: autoexport knows only
// grpc and http/protobuf, while the SDK's HTTP exporter speaks both encodings.
func (c Config) httpJSON() bool {
	if c.getenv == nil {
		return false
	}
	if v := strings.TrimSpace(c.getenv(EnvExporter)); v != "" && v != "otlp" {
		return false
	}
	protocol := c.getenv(EnvTracesProtocol)
	if protocol == "" {
		protocol = c.getenv(EnvProtocol)
	}
	return protocol == "http/json"
}
