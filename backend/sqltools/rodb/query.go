package rodb

import (
	"context"
	"database/sql"
	"math"
	"strconv"
	"time"
)

// Rows is a bounded query result.
type Rows struct {
	Columns []string
	Rows    [][]any
	// Truncated says there were more than the requested maximum of rows;
	// Rows then holds exactly that maximum.
	Truncated bool
}

// Query runs q with args and returns at most max rows (max <= 0 means no
// limit). Values are int64, float64, string or nil; blobs become strings,
// infinities the strings "Infinity" and "-Infinity".
func (d *DB) Query(ctx context.Context, q string, args []any, max int) (*Rows, error) {
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, wrapQueryError(ctx, err)
	}
	return Scan(ctx, rows, max)
}

// Scan reads at most max rows (max <= 0: all) of rows, converting
// values as Query does, and closes rows. Errors are classified as
// Query's are (timeouts, cancellations).
func Scan(ctx context.Context, rows *sql.Rows, max int) (*Rows, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, wrapQueryError(ctx, err)
	}
	out := &Rows{Columns: cols, Rows: [][]any{}}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if max > 0 && len(out.Rows) == max {
			out.Truncated = true
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, wrapQueryError(ctx, err)
		}
		row := make([]any, len(cols))
		for i, v := range vals {
			row[i] = Value(v)
		}
		out.Rows = append(out.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return nil, wrapQueryError(ctx, err)
	}
	return out, nil
}

// QueryValue runs a query that returns one value (the first column of the
// first row; nil when there is no row).
func (d *DB) QueryValue(ctx context.Context, q string, args []any) (any, error) {
	r, err := d.Query(ctx, q, args, 1)
	if err != nil {
		return nil, err
	}
	if len(r.Rows) == 0 || len(r.Rows[0]) == 0 {
		return nil, nil
	}
	return r.Rows[0][0], nil
}

// Value converts a value scanned from SQLite to int64, float64, string or
// nil.
func Value(v any) any {
	switch x := v.(type) {
	case nil, int64, string:
		return x
	case float64:
		if math.IsInf(x, 1) {
			return "Infinity"
		}
		if math.IsInf(x, -1) {
			return "-Infinity"
		}
		if math.IsNaN(x) {
			return nil
		}
		return x
	case []byte:
		return string(x)
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case int:
		return int64(x)
	case time.Time:
		return x.Format("2006-01-02 15:04:05")
	}
	return strconv.Quote("unsupported value")
}

// WrapError classifies an error of a query run under ctx as Query
// does: a deadline is a timeout, a cancellation canceled.
func WrapError(ctx context.Context, err error) error { return wrapQueryError(ctx, err) }
