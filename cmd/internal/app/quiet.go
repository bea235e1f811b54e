package app

import (
	"context"
	"log/slog"
	"strings"
)

// Quiet is logger for a library's routine output: its info lines go to debug, and an
// error that only reports a shutdown (context canceled) is not an error of the run.
// A normal run of the worker then logs no ERROR, and no library chatter at info.
func Quiet(logger *slog.Logger) *slog.Logger {
	return slog.New(&quietHandler{next: logger.Handler()})
}

type quietHandler struct{ next slog.Handler }

func (h *quietHandler) level(r slog.Record) slog.Level {
	switch {
	case r.Level == slog.LevelInfo:
		return slog.LevelDebug
	case r.Level >= slog.LevelError && canceled(r):
		return slog.LevelDebug
	}
	return r.Level
}

func canceled(r slog.Record) bool {
	found := strings.Contains(r.Message, "context canceled")
	r.Attrs(func(a slog.Attr) bool {
		found = found || strings.Contains(a.Value.String(), "context canceled")
		return !found
	})
	return found
}

func (h *quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	// The level is only known per record: let every level through to Handle.
	return h.next.Enabled(ctx, slog.LevelDebug) || l >= slog.LevelWarn || h.next.Enabled(ctx, l)
}

func (h *quietHandler) Handle(ctx context.Context, r slog.Record) error {
	l := h.level(r)
	if !h.next.Enabled(ctx, l) {
		return nil
	}
	r.Level = l
	return h.next.Handle(ctx, r)
}

func (h *quietHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &quietHandler{next: h.next.WithAttrs(attrs)}
}

func (h *quietHandler) WithGroup(name string) slog.Handler {
	return &quietHandler{next: h.next.WithGroup(name)}
}
