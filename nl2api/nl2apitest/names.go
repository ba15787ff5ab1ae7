package nl2apitest

import (
	"strings"
	"unicode"
)

// Name pools. Every pool holds names that are hard for a builder: SQL
// keywords, toolenv's protocol fields and argument names, non-ASCII
// names, names with spaces and punctuation.
var (
	// tableNames are candidate table names.
	tableNames = []string{"order", "label", "select", "tool", "session", "group", "Bücher", "größe", "values", "index", "table", "from", "where", "Straßen", "collection", "args"}
	// protocolNames are toolenv's own field and argument names; the
	// categorical column of the main table always takes one of them.
	protocolNames = []string{"label", "session", "tool", "name", "id", "args", "arguments", "collection", "format", "type", "value", "data_source", "key_name", "condition", "hidden", "meta", "status", "error", "limit", "select", "order"}
	pkNames       = []string{"id", "key", "nr", "ID", "Id", "order", "label"}
	textNames     = []string{"name", "select", "title", "größe", "Bezeichnung", "description", "from", "Straße", "naïve café", "Free Meal Count (K-12)", "columns", "rows", "where", "tool"}
	intNames      = []string{"limit", "order", "count", "group", "row_count", "Jahr", "höhe", "session", "offset", "args"}
	realNames     = []string{"value", "sum", "straße_km", "price (€)", "desc", "avg", "Bevölkerung", "mean"}
	dateNames     = []string{"date", "from", "where", "Datum", "when", "time"}
	uniqueNames   = []string{"rank", "index", "position", "asc", "Rang", "id_2"}
	fkNames       = []string{"parent", "label_id", "order_id", "tool_id", "ref"}
	childText     = []string{"label", "name", "kategorie", "Größe", "session", "type"}
	childInt      = []string{"limit", "menge", "count", "args", "value"}
	wKeyNames     = []string{"key", "code", "Schlüssel", "label"}
	wSeqNames     = []string{"seq", "nr", "limit", "order"}
	wValNames     = []string{"value", "label", "wert", "select"}
	// collisionPairs are column names that differ in the database but
	// become equal once made ASCII identifiers.
	collisionPairs = [][2]string{{"e-mail", "e_mail"}, {"größe_x", "groesse_x"}, {"Jahr (Ende)", "jahr_ende"}, {"a b", "a_b"}}
	// longPrefix makes two column names whose endpoint names only differ
	// after 64 characters.
	longPrefix = "measured_value_of_the_annual_population_census_in_the_region_"
	dbNames    = []string{"shop", "bücherei", "world", "order", "label", "kennel", "straße"}
)

// nastyStrings are values a REST client must percent-encode and a SQL
// builder must bind, never splice.
var nastyStrings = []string{
	"a#b", "c+d", "50%", "x&y=z", "O'Brien", `say "hi"`, "semi;colon", `back\slash`, "Zürich", "Straße",
	"naïve café", "?q=1", "tab\there", "plus+sign", "#hash", "100% + 1#", "%20", "a_b%", "--", "/*x*/", "DROP TABLE", "€uro",
}

// sqliteKeywords are the words SQLite reserves (its keyword list); a name
// among them is always quoted in generated SQL.
var sqliteKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`ABORT ACTION ADD AFTER ALL ALTER ALWAYS ANALYZE AND AS ASC ATTACH AUTOINCREMENT
BEFORE BEGIN BETWEEN BY CASCADE CASE CAST CHECK COLLATE COLUMN COMMIT CONFLICT CONSTRAINT CREATE CROSS
CURRENT CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP DATABASE DEFAULT DEFERRABLE DEFERRED DELETE DESC
DETACH DISTINCT DO DROP EACH ELSE END ESCAPE EXCEPT EXCLUDE EXCLUSIVE EXISTS EXPLAIN FAIL FILTER FIRST
FOLLOWING FOR FOREIGN FROM FULL GENERATED GLOB GROUP GROUPS HAVING IF IGNORE IMMEDIATE IN INDEX INDEXED
INITIALLY INNER INSERT INSTEAD INTERSECT INTO IS ISNULL JOIN KEY LAST LEFT LIKE LIMIT MATCH MATERIALIZED
NATURAL NO NOT NOTHING NOTNULL NULL NULLS OF OFFSET ON OR ORDER OTHERS OUTER OVER PARTITION PLAN PRAGMA
PRECEDING PRIMARY QUERY RAISE RANGE RECURSIVE REFERENCES REGEXP REINDEX RELEASE RENAME REPLACE RESTRICT
RETURNING RIGHT ROLLBACK ROW ROWS SAVEPOINT SELECT SET TABLE TEMP TEMPORARY THEN TIES TO TRANSACTION
TRIGGER UNBOUNDED UNION UNIQUE UPDATE USING VACUUM VALUES VIEW VIRTUAL WHEN WHERE WINDOW WITH WITHOUT`) {
		sqliteKeywords[k] = true
	}
}

// bareOK reports whether name may appear unquoted in SQL: an identifier
// of letters (any script), digits and underscores that is no keyword.
func bareOK(name string) bool {
	if name == "" || sqliteKeywords[strings.ToUpper(name)] {
		return false
	}
	for i, r := range name {
		if r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r)) {
			continue
		}
		return false
	}
	switch strings.ToLower(name) {
	case "rowid", "oid", "_rowid_":
		return false // SQLite reads them as the row id
	}
	return true
}
