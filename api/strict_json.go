package api

import (
	"maps"

	"github.com/danielgtaylor/huma/v2"
	jsonv2 "github.com/go-json-experiment/json"
)

// strictFormats are huma's formats with a JSON decoder that matches field names exactly
// and refuses a name given twice or one the body does not have. encoding/json matches names case-insensitively and
// keeps the last of duplicates, so {"scope": ..., "Scope": ...} could be validated on
// one copy and decoded from the other.
func strictFormats() map[string]huma.Format {
	formats := maps.Clone(huma.DefaultFormats)
	strict := huma.DefaultJSONFormat
	strict.Unmarshal = func(data []byte, v any) error {
		return jsonv2.Unmarshal(data, v, jsonv2.RejectUnknownMembers(true))
	}
	for name := range formats {
		if name == "application/json" || name == "json" {
			formats[name] = strict
		}
	}
	return formats
}
