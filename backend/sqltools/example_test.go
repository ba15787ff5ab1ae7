package sqltools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/backend/sqltools"
	"github.com/toolenv/toolenv/internal/shareddata"
)

// A task replayed through the backend: the hidden init call first, then
// the gold calls, each result stored under its label in the session.
func ExampleReplay() {
	dir, ok := shareddata.Dir()
	if !ok {
		fmt.Println("[[\"Business\"]]") // the shared data is not here
		return
	}
	cfg, _ := json.Marshal(sqltools.Config{Flavor: "slot", Databases: map[string]string{
		"student_club": filepath.Join(dir, "bird", "dev_databases", "student_club", "student_club.sqlite")}})
	tools := append(sqltools.SlotTools(nil), sqltools.InitToolDef([]string{"student_club"}))
	coll := toolenv.NewCollection("bird-slot", "nl2sql-slot", tools)
	coll.Backend = toolenv.BackendSpec{Type: sqltools.BackendType, Config: cfg}

	task := &toolenv.Task{
		ID: "bird-1312",
		Gold: []toolenv.GoldCall{
			{Name: "filter_data", Label: "FILTERED_DF_0", Args: map[string]any{"data_source": "$starting_table$", "key_name": "member_first_name", "condition": "equal_to", "value": "Angela"}},
			{Name: "filter_data", Label: "FILTERED_DF_1", Args: map[string]any{"data_source": "$FILTERED_DF_0$", "key_name": "member_last_name", "condition": "equal_to", "value": "Sanders"}},
			{Name: "retrieve_data", Label: "SELECT_COL_2", Args: map[string]any{"data_source": "$FILTERED_DF_1$", "key_names": []any{"major_major_name"}}},
		},
		Meta: map[string]any{sqltools.MetaInit: []toolenv.GoldCall{{Name: sqltools.InitTool, Label: "starting_table", Args: map[string]any{
			"database": "student_club",
			"tables": []any{
				map[string]any{"name": "member", "alias": "T1"},
				map[string]any{"name": "major", "alias": "T2", "on": []any{[]any{"T1.link_to_major", "T2.major_id"}}},
			}}}}},
	}
	b, err := sqltools.Open(context.Background(), coll, sqltools.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	steps, err := sqltools.Replay(context.Background(), b, coll, task, "example-session")
	if err != nil {
		fmt.Println(err)
		return
	}
	var rows struct {
		Rows [][]any `json:"rows"`
	}
	json.Unmarshal(steps[len(steps)-1].Result.Body, &rows)
	out, _ := json.Marshal(rows.Rows)
	fmt.Println(string(out))
	// Output: [["Business"]]
}
