package changes

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
)

// ErrCursor is a cursor that is not one the feed gave.
var ErrCursor = errors.New("invalid cursor")

// Cursor is where a reader stands: the last position read of each scope. Its text is
// opaque to readers (base64 of JSON).
type Cursor map[string]int64

type cursorJSON struct {
	V int              `json:"v"`
	P map[string]int64 `json:"p"`
}

// String is the cursor as the feed gives it.
func (c Cursor) String() string {
	b, _ := json.Marshal(cursorJSON{V: 1, P: c}) //nolint:errchkjson // a map of strings to numbers
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseCursor reads a cursor the feed gave; empty is the start of the feed.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, ErrCursor
	}
	var c cursorJSON
	if err := json.Unmarshal(b, &c); err != nil || c.V != 1 {
		return nil, ErrCursor
	}
	for _, p := range c.P {
		if p < 0 {
			return nil, ErrCursor
		}
	}
	if c.P == nil {
		c.P = map[string]int64{}
	}
	return Cursor(c.P), nil
}

func (c Cursor) clone() Cursor { return maps.Clone(c) }
