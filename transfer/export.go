// Package transfer moves memory out of credo and into it, for every front end (`beliefs
// export` and `import`, GET /v1/export and POST /v1/import): the export's JSON Lines
// (docs/api.md, "Export and import"), the import of such a file into scopes that hold
// nothing, and the import of mem0's exported memories. memory reads and writes the
// rows; this package frames them as lines, checks a file before anything is written,
// embeds what was imported and queues the jobs it needs.
package transfer

import (
	"bufio"
	"context"
	"encoding/json"
	"io"

	"github.com/credohq/credo/memory"
)

// Export is a snapshot of memory being written out as JSON Lines.
type Export struct {
	m *memory.Export
}

// OpenExport takes the snapshot of what q selects (memory.Store.OpenExport): an error,
// memory.ErrNotFound when q selects no scope that holds memory, comes before anything
// is written. Close it when done.
func OpenExport(ctx context.Context, store *memory.Store, q memory.ExportQuery) (*Export, error) {
	m, err := store.OpenExport(ctx, q)
	if err != nil {
		return nil, err
	}
	return &Export{m: m}, nil
}

// Header is the export's first line.
func (e *Export) Header() memory.ExportHeader { return e.m.Header }

// WriteTo writes the export to w: the header, one record a line, and the end record
// that tells a whole export from one cut short. Records go out as they are read, in
// the memory of one row and a buffer.
func (e *Export) WriteTo(ctx context.Context, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e.m.Header); err != nil {
		return err
	}
	if err := e.m.Records(ctx, enc.Encode); err != nil {
		return err
	}
	return bw.Flush()
}

// Close lets the snapshot go.
func (e *Export) Close(ctx context.Context) { e.m.Close(ctx) }
