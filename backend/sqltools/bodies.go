package sqltools

import (
	"bytes"
	"encoding/json"
)

// The response bodies, one per result kind. Field order is the JSON
// order.
type (
	tableBody struct {
		Label    string   `json:"label"`
		Type     kind     `json:"type"`
		Columns  []string `json:"columns"`
		RowCount int64    `json:"row_count"`
		Preview  [][]any  `json:"preview"`
	}
	groupedBody struct {
		Label      string   `json:"label"`
		Type       kind     `json:"type"`
		Columns    []string `json:"columns"`
		GroupBy    []string `json:"group_by"`
		GroupCount int64    `json:"group_count"`
	}
	valueBody struct {
		Label string `json:"label"`
		Type  kind   `json:"type"`
		Value any    `json:"value"`
	}
	// A list or rows result over the row cap shows its first Shown
	// values (rows) beside the full Count (RowCount); the whole result
	// stays in the session under its label.
	listBody struct {
		Label   string `json:"label"`
		Type    kind   `json:"type"`
		KeyName string `json:"key_name"`
		Count   int64  `json:"count"`
		Shown   *int   `json:"shown,omitempty"`
		Note    string `json:"note,omitempty"`
		Values  []any  `json:"values"`
	}
	rowsBody struct {
		Label    string   `json:"label"`
		Type     kind     `json:"type"`
		Columns  []string `json:"columns"`
		RowCount int64    `json:"row_count"`
		Shown    *int     `json:"shown,omitempty"`
		Note     string   `json:"note,omitempty"`
		Rows     [][]any  `json:"rows"`
	}
)

func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimRight(b.Bytes(), "\n")), nil
}
