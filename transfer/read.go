package transfer

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/credohq/credo/memory"
	"github.com/credohq/credo/transcript"
)

// ErrInput is the kind of a file an import refuses: not JSON lines, not an export, or
// records that do not hold together. Every such error is a *transcript.InputError of
// this kind (or memory.ErrImport), naming the line.
var ErrInput = errors.New("invalid import file")

// inputErrorf is bad input on line (0: the file as a whole).
func inputErrorf(line int, format string, args ...any) error {
	field := ""
	if line > 0 {
		field = fmt.Sprintf("line %d:", line)
	}
	return transcript.InputErrorf(ErrInput, field, format, args...)
}

// plan is an import file read and grouped by the scope it was exported from, in the
// order the scopes came.
type plan struct {
	scopes []*memory.ScopeImport
	// mem0: the scopes' memories came from mem0 and want consolidation.
	mem0 bool
}

// maxLine bounds one line of an export: an episode's transcript is its longest.
const maxLine = 64 << 20

// readExport reads a credo export: the header, the records, the end. It holds the
// whole file's records: an import checks all of them before it writes one.
func readExport(r io.Reader) (*plan, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		header *memory.ExportHeader
		end    *memory.ExportEnd
		counts = map[memory.RecordType]int{}
		byName = map[string]*memory.ScopeImport{}
		p      = &plan{}
	)
	for line := 1; ; line++ {
		raw, err := readLine(br)
		if errors.Is(err, io.EOF) && len(raw) == 0 {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read line %d: %w", line, err)
		}
		raw = bytes.TrimSpace(raw)
		if line == 1 {
			raw = bytes.TrimPrefix(raw, []byte("\uFEFF"))
		}
		switch {
		case len(raw) == 0:
			continue
		case header == nil:
			if header, err = readHeader(line, raw); err != nil {
				return nil, err
			}
			for _, s := range header.Scopes {
				sc := &memory.ScopeImport{Scope: s}
				byName[s] = sc
				p.scopes = append(p.scopes, sc)
			}
			continue
		case end != nil:
			return nil, inputErrorf(line, "a record follows the end record")
		}
		var rec struct {
			Type  memory.RecordType `json:"type"`
			Scope string            `json:"scope"`
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			return nil, inputErrorf(line, "is not a JSON object: %v", err)
		}
		if rec.Type == memory.RecordEnd {
			if end, err = readEnd(line, raw); err != nil {
				return nil, err
			}
			continue
		}
		sc := byName[rec.Scope]
		if sc == nil {
			return nil, inputErrorf(line, "scope %q is not one of the header's scopes", rec.Scope)
		}
		if err := addRecord(sc, rec.Type, line, raw); err != nil {
			return nil, err
		}
		counts[rec.Type]++
	}
	switch {
	case header == nil:
		return nil, inputErrorf(0, "the file is empty: an export begins with its header line")
	case end == nil:
		return nil, inputErrorf(0, "the export has no end record: it was cut short (export it again)")
	}
	for t, n := range end.Records {
		if counts[t] != n {
			return nil, inputErrorf(0, "the end record counts %d %s records, the file holds %d: it is not the export it was", n, t, counts[t])
		}
	}
	for t, n := range counts {
		if end.Records[t] != n {
			return nil, inputErrorf(0, "the end record counts %d %s records, the file holds %d: it is not the export it was", end.Records[t], t, n)
		}
	}
	for _, sc := range p.scopes {
		sortByID(sc)
	}
	return p, nil
}

// readLine is the next line of br without its newline; io.EOF with the last line when
// it has none.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("a line is longer than %d bytes", maxLine)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return bytes.TrimSuffix(line, []byte("\n")), err
		}
	}
}

func readHeader(line int, raw []byte) (*memory.ExportHeader, error) {
	var h memory.ExportHeader
	if err := json.Unmarshal(raw, &h); err != nil || h.Format != memory.ExportFormat {
		return nil, inputErrorf(line, `is not the header of a credo export ({"format": %q, ...}); a mem0 export is imported with --from mem0`, memory.ExportFormat)
	}
	switch {
	case h.Version > memory.ExportVersion:
		return nil, inputErrorf(line, "the export is of version %d, written by a later credo; this one reads version %d", h.Version, memory.ExportVersion)
	case h.Version < 1:
		return nil, inputErrorf(line, "version %d is not an export version", h.Version)
	case h.Since != nil:
		return nil, inputErrorf(line, "the export holds what changed since %s, not a whole memory: import an export made without --since",
			h.Since.Format("2006-01-02T15:04:05Z07:00"))
	}
	seen := map[string]bool{}
	for _, s := range h.Scopes {
		if seen[s] {
			return nil, inputErrorf(line, "scope %q is listed twice", s)
		}
		seen[s] = true
	}
	return &h, nil
}

func readEnd(line int, raw []byte) (*memory.ExportEnd, error) {
	var end memory.ExportEnd
	if err := strict(raw, &end); err != nil {
		return nil, inputErrorf(line, "is not an end record: %v", err)
	}
	return &end, nil
}

// strict decodes raw into v, refusing a field v does not have: an import keeps every
// field or refuses the file, never drops one.
func strict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// addRecord decodes a record of type t into sc.
func addRecord(sc *memory.ScopeImport, t memory.RecordType, line int, raw []byte) error {
	var err error
	switch t {
	case memory.RecordScope:
		var rec memory.ExportedScope
		if err = strict(raw, &rec); err == nil {
			if sc.State != nil {
				return inputErrorf(line, "scope %q has a scope record on line %d already", sc.Scope, sc.State.Line)
			}
			rec.Line, sc.State = line, &rec
		}
	case memory.RecordEntity:
		sc.Entities, err = appendRecord(sc.Entities, raw, func(r *memory.ExportedEntity) { r.Line = line })
	case memory.RecordEpisode:
		sc.Episodes, err = appendRecord(sc.Episodes, raw, func(r *memory.ExportedEpisode) { r.Line = line })
	case memory.RecordBelief:
		sc.Beliefs, err = appendRecord(sc.Beliefs, raw, func(r *memory.ExportedBelief) { r.Line = line })
	case memory.RecordDependency:
		sc.Dependencies, err = appendRecord(sc.Dependencies, raw, func(r *memory.ExportedDependency) { r.Line = line })
	case memory.RecordEvent:
		sc.Events, err = appendRecord(sc.Events, raw, func(r *memory.ExportedEvent) { r.Line = line })
	case memory.RecordReviewItem:
		var it memory.ExportedItem
		if err = json.Unmarshal(raw, &it); err == nil {
			it.Line = line
			sc.Items = append(sc.Items, it)
		}
	case memory.RecordPolicy:
		return inputErrorf(line, "this version of credo keeps no scope policy: the export was made by a later one")
	default:
		return inputErrorf(line, "type %q is not a record of an export", t)
	}
	if err != nil {
		article := "a"
		if strings.ContainsRune("aeiou", rune(t[0])) {
			article = "an"
		}
		return inputErrorf(line, "is not %s %s record: %v", article, t, err)
	}
	return nil
}

func appendRecord[T any](list []T, raw []byte, setLine func(*T)) ([]T, error) {
	var rec T
	if err := strict(raw, &rec); err != nil {
		return list, err
	}
	setLine(&rec)
	return append(list, rec), nil
}

// sortByID puts each kind of record in the order of its exported ids: new ids are
// given in that order, so reads that break ties by id list them as before.
func sortByID(sc *memory.ScopeImport) {
	slices.SortStableFunc(sc.Episodes, func(a, b memory.ExportedEpisode) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortStableFunc(sc.Beliefs, func(a, b memory.ExportedBelief) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortStableFunc(sc.Events, func(a, b memory.ExportedEvent) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortStableFunc(sc.Items, func(a, b memory.ExportedItem) int { return cmp.Compare(a.ID, b.ID) })
}
