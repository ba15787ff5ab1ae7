package redact

import (
	"context"
	"log/slog"
)

// Handler returns h with every log record's message and attribute
// values (strings, errors, anything printed as text, in groups too)
// passed through Text before h sees them: the log's last line of
// defence against a URL, DSN or token some message quotes.
func Handler(h slog.Handler) slog.Handler { return &handler{h} }

type handler struct{ next slog.Handler }

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, Text(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = attr(a)
	}
	return &handler{h.next.WithAttrs(red)}
}

func (h *handler) WithGroup(name string) slog.Handler { return &handler{h.next.WithGroup(name)} }

// attr is a with its value redacted.
func attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s := v.String(); Text(s) != s {
			return slog.String(a.Key, Text(s))
		}
		return a
	case slog.KindGroup:
		g := v.Group()
		red := make([]slog.Attr, len(g))
		for i, ga := range g {
			red[i] = attr(ga)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(red...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			if s := x.Error(); Text(s) != s {
				return slog.String(a.Key, Text(s))
			}
		case interface{ String() string }:
			if s := x.String(); Text(s) != s {
				return slog.String(a.Key, Text(s))
			}
		}
	}
	return a
}
