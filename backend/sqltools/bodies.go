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
	listBody struct {
		Label   string `json:"label"`
		Type    kind   `json:"type"`
		KeyName string `json:"key_name"`
		Count   int    `json:"count"`
		Values  []any  `json:"values"`
	}
	rowsBody struct {
		Label    string   `json:"label"`
		Type     kind     `json:"type"`
		Columns  []string `json:"columns"`
		RowCount int      `json:"row_count"`
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
