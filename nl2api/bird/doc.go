// Package bird reads the BIRD-SQL dev layout: the questions (dev.json and
// the SQL-only corpus), the schemas of dev_tables.json, and each database's
// database_description/*.csv column descriptions, whose encodings vary
// (UTF-8, UTF-8 with a byte-order mark, Windows-1252): Decode detects and
// converts them.
//
//	DIR/dev.json
//	DIR/dev_sql_corpus.json            (optional, parser coverage only)
//	DIR/dev_tables.json                (optional)
//	DIR/dev_databases/<db>/<db>.sqlite
//	DIR/dev_databases/<db>/database_description/<table>.csv
package bird
