package nl2apitest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/toolenv/toolenv/nl2api/bird"
)

// The flavors a question may have to be kept in.
var allFlavors = []string{"slot", "sel", "rest"}

// questions instantiates every question template on one database.
type questions struct {
	r    *rand.Rand
	d    *database
	next int
	out  []Question
}

func (qb *questions) add(kind, question, sql string, keep []string, reject string) {
	qb.out = append(qb.out, Question{
		Question: bird.Question{ID: qb.next, DB: qb.d.name, Question: question, SQL: sql, Difficulty: "generated"},
		Kind:     kind, Keep: keep, Reject: reject,
	})
	qb.next++
}

// id quotes an identifier in one of SQLite's styles, or leaves it bare
// when that is safe.
func (qb *questions) id(name string) string {
	styles := 3
	if bareOK(name) {
		styles = 4
	}
	switch qb.r.IntN(styles) {
	case 0:
		return quote(name)
	case 1:
		return "`" + strings.ReplaceAll(name, "`", "``") + "`"
	case 2:
		if !strings.ContainsAny(name, "[]") {
			return "[" + name + "]"
		}
		return quote(name)
	}
	return name
}

// lit is the SQL literal of a value.
func lit(v any) string {
	switch x := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case nil:
		return "NULL"
	}
	panic(fmt.Sprintf("nl2apitest: literal of %T", v))
}

// val picks a non-empty value of a column.
func (qb *questions) val(t *table, role string) any {
	var vs []any
	for _, v := range t.values(role) {
		if s, ok := v.(string); ok && s == "" {
			continue
		}
		vs = append(vs, v)
	}
	return vs[qb.r.IntN(len(vs))]
}

// all adds every template once.
func (qb *questions) all() {
	d, r := qb.d, qb.r
	p, c, w := d.main, d.child, d.wr
	P, C := qb.id(p.name), qb.id(c.name)
	col := func(t *table, role string) string { return qb.id(t.col(role).name) }
	pc := func(role string) string { return col(p, role) }
	all := allFlavors

	v := qb.val(p, "cat")
	qb.add("filter_eq", fmt.Sprintf("Which %s have %s %v?", p.col("txt").name, p.col("cat").name, v),
		fmt.Sprintf("SELECT %s FROM %s WHERE %s = %s", pc("txt"), P, pc("cat"), lit(v)), all, "")
	k := int64(r.IntN(6))
	qb.add("filter_eq_num", "Which texts and positions have this count?",
		fmt.Sprintf("SELECT %s, %s FROM %s WHERE %s = %d", pc("txt"), pc("u"), P, pc("n"), k), all, "")
	k = int64(5 + r.IntN(20))
	qb.add("multi_column", "Texts, counts and amounts of the rows past a position.",
		fmt.Sprintf("SELECT %s, %s, %s FROM %s WHERE %s > %d", pc("txt"), pc("n"), pc("x"), P, pc("u"), k), all, "")
	qb.add("multi_column_all", "Every category with its date.",
		fmt.Sprintf("SELECT %s, %s FROM %s", pc("cat"), pc("d"), P), all, "")
	k = int64(r.IntN(8))
	qb.add("join", "Texts with their children's kinds for big quantities.",
		fmt.Sprintf("SELECT T1.%s, T2.%s FROM %s AS T1 JOIN %s AS T2 ON T1.%s = T2.%s WHERE T2.%s > %d",
			pc("txt"), col(c, "ctext"), P, C, pc("pk"), col(c, "fk"), col(c, "cint"), k), all, "")
	qb.add("join_collide", "Item numbers of the parent and ids of the children with small quantities.",
		fmt.Sprintf("SELECT T1.%s, T2.%s FROM %s AS T1 INNER JOIN %s AS T2 ON T1.%s = T2.%s WHERE T2.%s < %d",
			pc("item_id"), col(c, "pk"), P, C, pc("pk"), col(c, "fk"), col(c, "cint"), 1+r.IntN(8)), all, "")
	qb.add("group_count", "How many rows has each category?",
		fmt.Sprintf("SELECT %s, COUNT(*) FROM %s GROUP BY %s", pc("cat"), P, pc("cat")), all, "")
	qb.add("order_limit", "The texts of the three highest positions.",
		fmt.Sprintf("SELECT %s FROM %s ORDER BY %s DESC LIMIT 3", pc("txt"), P, pc("u")), all, "")
	qb.add("order_limit_5", "The texts of the five highest positions.",
		fmt.Sprintf("SELECT %s FROM %s ORDER BY %s DESC LIMIT 5", pc("txt"), P, pc("u")), all, "")
	v = qb.val(p, "cat")
	qb.add("round_avg", "Average amount of a category, two decimals.",
		fmt.Sprintf("SELECT ROUND(AVG(%s), 2) FROM %s WHERE %s = %s", pc("x"), P, pc("cat"), lit(v)), all, "")
	qb.add("substr_neg", "Last three characters of the texts with this count.",
		fmt.Sprintf("SELECT SUBSTR(%s, -3) FROM %s WHERE %s = %d", pc("txt"), P, pc("n"), r.IntN(6)), all, "")
	day := qb.val(p, "d").(string)
	qb.add("substr_neg_where", "Texts of the rows on this day of a month.",
		fmt.Sprintf("SELECT %s FROM %s WHERE SUBSTR(%s, -2) = %s", pc("txt"), P, pc("d"), lit(day[len(day)-2:])), all, "")
	k = int64(r.IntN(3))
	qb.add("from_subquery", "Texts of rows with counts between two bounds.",
		fmt.Sprintf("SELECT T.%s FROM (SELECT %s, %s FROM %s WHERE %s > %d) AS T WHERE T.%s < %d",
			pc("txt"), pc("txt"), pc("n"), P, pc("n"), k, pc("n"), k+3), all, "")
	qb.add("from_subquery_top", "Among the five highest positions, the texts with a count of at least two.",
		fmt.Sprintf("SELECT T.%s FROM (SELECT * FROM %s ORDER BY %s DESC LIMIT 5) AS T WHERE T.%s >= 2",
			pc("txt"), P, pc("u"), pc("n")), all, "")
	// A scalar subquery ranked by a unique column decides its row; by
	// a column with repeated values, its LIMIT 1 may cut through tied
	// rows whose amounts differ, and then SQL does not say which amount
	// it compares with: REST runs the SQL as it is, SLOT and SEL must
	// reject it.
	qb.add("subquery_top_unique", "How many rows have a larger amount than the row at the highest position?",
		fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s > (SELECT %s FROM %s ORDER BY %s DESC LIMIT 1)", P, pc("x"), pc("x"), P, pc("u")), all, "")
	tieKind, tieKeep, tieReject := "subquery_top_untied", all, ""
	if p.tiedAtTop("n", "x") {
		tieKind, tieKeep, tieReject = "subquery_top_tied", []string{"rest"}, "gold"
	}
	qb.add(tieKind, "How many rows have a larger amount than the row with the highest count?",
		fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s > (SELECT %s FROM %s ORDER BY %s DESC LIMIT 1)", P, pc("x"), pc("x"), P, pc("n")), tieKeep, tieReject)
	if tieReject != "" {
		qb.out[len(qb.out)-1].RejectIn = []string{"slot", "sel"}
	}
	// Bare columns beside one MAX or MIN come from the row holding it
	// (SQLite's rule); beside SUM, from a row SQL does not name.
	qb.add("bare_beside_max", "The text of the row at the highest position, with that position.",
		fmt.Sprintf("SELECT MAX(%s), %s FROM %s", pc("u"), pc("txt"), P), all, "")
	qb.add("bare_beside_min", "The key and date of the row at the lowest position, with that position.",
		fmt.Sprintf("SELECT %s, %s, MIN(%s) FROM %s", pc("pk"), pc("d"), pc("u"), P), all, "")
	qb.add("bare_beside_max_and_sum", "The text at the highest position, with that position, the number of rows and the total count.",
		fmt.Sprintf("SELECT %s, MAX(%s), COUNT(*), SUM(%s) FROM %s", pc("txt"), pc("u"), pc("n"), P), all, "")
	// Beside SUM or COUNT, from a row SQL does not name: SLOT and SEL
	// group by the bare columns, which gives SQL's one row only when they
	// hold one value over the rows; verification rejects the others.
	qb.add("bare_beside_sum", "The total count, with some text.",
		fmt.Sprintf("SELECT SUM(%s), %s FROM %s", pc("n"), pc("txt"), P), []string{"rest"}, "verify")
	qb.out[len(qb.out)-1].RejectIn = []string{"slot", "sel"}
	qb.out[len(qb.out)-1].RejectReason = "bare column with aggregate holds several values"
	v = qb.val(p, "cat")
	qb.add("bare_beside_sum_one_value", "The total amount and number of rows of one category, with the category.",
		fmt.Sprintf("SELECT SUM(%s), COUNT(*), %s FROM %s WHERE %s = %s", pc("x"), pc("cat"), P, pc("cat"), lit(v)), all, "")
	parent := c.rows[r.IntN(len(c.rows))][c.colIndex("fk")]
	qb.add("bare_beside_count_join", "How many children has this row, and what are its text and date?",
		fmt.Sprintf("SELECT T1.%s, COUNT(T2.%s), T1.%s FROM %s AS T1 JOIN %s AS T2 ON T1.%s = T2.%s WHERE T1.%s = %s",
			pc("txt"), col(c, "pk"), pc("d"), P, C, pc("pk"), col(c, "fk"), pc("pk"), lit(parent)), all, "")
	// Several aggregates of one column: the first replaces the column's
	// per-group values, the others go to new columns (new_column).
	qb.add("two_aggregates_one_column", "Average and largest amount of each category.",
		fmt.Sprintf("SELECT AVG(%s), MAX(%s), %s FROM %s GROUP BY %s", pc("x"), pc("x"), pc("cat"), P, pc("cat")), all, "")
	qb.add("three_aggregates_having_order", "Smallest, largest and total count of each category whose counts differ, largest total first.",
		fmt.Sprintf("SELECT %s, MIN(%s), MAX(%s), SUM(%s) FROM %s GROUP BY %s HAVING MAX(%s) > MIN(%s) ORDER BY SUM(%s) DESC, %s",
			pc("cat"), pc("n"), pc("n"), pc("n"), P, pc("cat"), pc("n"), pc("n"), pc("n"), pc("cat")), all, "")
	qb.add("count_of_group_key", "For each category, how many rows name it and how many rows it has.",
		fmt.Sprintf("SELECT %s, COUNT(%s), COUNT(*) FROM %s GROUP BY %s", pc("cat"), pc("cat"), P, pc("cat")), all, "")
	// Window functions: RANK and DENSE_RANK become rank_data (a new
	// column rank_value); ROW_NUMBER over tied rows is SQLite's pick.
	k = int64(r.IntN(3))
	qb.add("rank_window", "Texts and counts of the rows with a count over a bound, ranked by count, largest first.",
		fmt.Sprintf("SELECT %s, %s, RANK() OVER (ORDER BY %s DESC) AS %s FROM %s WHERE %s > %d", pc("txt"), pc("n"), pc("n"), qb.id("Rang"), P, pc("n"), k), all, "")
	qb.add("dense_rank_partition", "Each row's text and amount with the amount's dense rank within its category.",
		fmt.Sprintf("SELECT %s, %s, %s, DENSE_RANK() OVER (PARTITION BY %s ORDER BY %s) FROM %s", pc("cat"), pc("txt"), pc("x"), pc("cat"), pc("x"), P), all, "")
	qb.add("rank_per_group", "Categories ranked by how many rows they have.",
		fmt.Sprintf("SELECT %s, COUNT(*), RANK() OVER (ORDER BY COUNT(*) DESC) FROM %s GROUP BY %s", pc("cat"), P, pc("cat")), all, "")
	qb.add("row_number_window", "Texts numbered by count.",
		fmt.Sprintf("SELECT %s, ROW_NUMBER() OVER (ORDER BY %s) FROM %s", pc("txt"), pc("n"), P), []string{"rest"}, "decompose")
	qb.out[len(qb.out)-1].RejectIn = []string{"slot", "sel"}
	v = qb.val(p, "cat")
	qb.add("union", "Texts of one category or with a high count.",
		fmt.Sprintf("SELECT %s FROM %s WHERE %s = %s UNION SELECT %s FROM %s WHERE %s > %d",
			pc("txt"), P, pc("cat"), lit(v), pc("txt"), P, pc("n"), 3+r.IntN(2)), all, "")
	qb.add("intersect", "Categories that have both high counts and small amounts.",
		fmt.Sprintf("SELECT %s FROM %s WHERE %s > %d INTERSECT SELECT %s FROM %s WHERE %s < %d",
			pc("cat"), P, pc("n"), r.IntN(3), pc("cat"), P, pc("x"), 300+r.IntN(400)), all, "")
	v = qb.val(p, "cat")
	qb.add("except", "Texts not in one category.",
		fmt.Sprintf("SELECT %s FROM %s EXCEPT SELECT %s FROM %s WHERE %s = %s", pc("txt"), P, pc("txt"), P, pc("cat"), lit(v)), all, "")
	qb.add("except_join", "Texts of rows without children.",
		fmt.Sprintf("SELECT %s FROM %s EXCEPT SELECT T1.%s FROM %s AS T1 JOIN %s AS T2 ON T1.%s = T2.%s",
			pc("txt"), P, pc("txt"), P, C, pc("pk"), col(c, "fk")), all, "")
	lb := pc("long_b")
	qb.add("long_name", "Census figures of the regions with this other figure.",
		fmt.Sprintf("SELECT %s FROM %s WHERE %s = %d", pc("long_a"), P, lb, r.IntN(4)), all, "")
	qb.add("long_name_distinct", "Distinct census figures of the regions with this other figure.",
		fmt.Sprintf("SELECT DISTINCT %s FROM %s WHERE %s = %d", pc("long_a"), P, lb, r.IntN(4)), all, "")
	qb.add("empty_literal", "Texts whose category is empty.",
		fmt.Sprintf("SELECT %s FROM %s WHERE %s = ''", pc("txt"), P, pc("cat")), all, "")
	qb.add("sqlite_rejects", "What are the ages?",
		fmt.Sprintf("SELECT alter FROM %s", P), nil, "gold")
	v = qb.val(p, "cat")
	qb.add("hidden_constant", "Amounts in cents of one category.",
		fmt.Sprintf("SELECT %s * 100 FROM %s WHERE %s = %s", pc("x"), P, pc("cat"), lit(v)), all, "")
	qb.add("like", "Texts containing a special character.",
		fmt.Sprintf("SELECT %s FROM %s WHERE %s LIKE %s", pc("txt"), P, pc("txt"), lit("%"+pick(r, []string{"#", "+", "&", "'", "%"})+"%")), all, "")
	qb.add("is_null", "Texts of rows without an amount.",
		fmt.Sprintf("SELECT %s FROM %s WHERE %s IS NULL", pc("txt"), P, pc("x")), all, "")
	qb.add("gt_vs_ge_a", "Texts of rows with a count over a bound.",
		fmt.Sprintf("SELECT %s FROM %s WHERE %s > %d", pc("txt"), P, pc("n"), 2), all, "")
	qb.add("gt_vs_ge_b", "Texts of rows with a count of at least a bound.",
		fmt.Sprintf("SELECT %s FROM %s WHERE %s >= %d", pc("txt"), P, pc("n"), 2), all, "")
	qb.add("without_rowid", "Keys and values of the later entries.",
		fmt.Sprintf("SELECT %s, %s FROM %s WHERE %s > %d", col(w, "wk"), col(w, "wv"), qb.id(w.name), col(w, "wn"), r.IntN(2)), all, "")
	qb.add("rowid_column", "Record codes and kinds of the children with this quantity.",
		fmt.Sprintf("SELECT T2.%s, T2.%s FROM %s AS T2 WHERE T2.%s = %d", quote("rowid"), col(c, "ctext"), C, col(c, "cint"), r.IntN(10)), all, "")
	cs := p.values("cat")
	var in []string
	for _, x := range cs[:min(2, len(cs))] {
		in = append(in, lit(x))
	}
	qb.add("in_list", "Texts of two categories.",
		fmt.Sprintf("SELECT %s FROM %s WHERE %s IN (%s)", pc("txt"), P, pc("cat"), strings.Join(in, ", ")), all, "")
	qb.add("count_distinct", "How many categories are there?",
		fmt.Sprintf("SELECT COUNT(DISTINCT %s) FROM %s", pc("cat"), P), all, "")
	qb.add("group_having", "Average amount of each category with more than one row.",
		fmt.Sprintf("SELECT %s, AVG(%s) FROM %s GROUP BY %s HAVING COUNT(*) > 1", pc("cat"), pc("x"), P, pc("cat")), all, "")
	qb.add("pair_columns", "Both contacts of the rows with this count.",
		fmt.Sprintf("SELECT %s, %s FROM %s WHERE %s = %d", pc("pair_a"), pc("pair_b"), P, pc("n"), r.IntN(6)), all, "")
	pr := d.proto
	row := pr.rows[r.IntN(len(pr.rows))]
	qb.add("protocol_params", "The name of the entry with these tag, sitting, implement, remark and sequence.",
		fmt.Sprintf("SELECT %s FROM %s WHERE %s = %s AND %s = %s AND %s = %s AND %s = %s AND %s >= %s AND %s <= %s",
			col(pr, "proto3"), qb.id(pr.name), col(pr, "proto0"), lit(row[0]), col(pr, "proto1"), lit(row[1]), col(pr, "proto2"), lit(row[2]),
			col(pr, "proto4"), lit(row[4]), col(pr, "proto6"), lit(row[6]), col(pr, "proto7"), lit(row[7])), all, "")
	if b := d.big; b != nil {
		qb.add("big_distinct", "The classes of the measurements.",
			fmt.Sprintf("SELECT DISTINCT %s FROM %s", col(b, "bcat"), qb.id(b.name)), all, "")
		qb.add("big_count", "How many measurements has one class?",
			fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s = %s", qb.id(b.name), col(b, "bcat"), lit(qb.val(b, "bcat"))), all, "")
		qb.add("big_filter", "The measurement of one record.",
			fmt.Sprintf("SELECT %s FROM %s WHERE %s = %d", col(b, "bnum"), qb.id(b.name), col(b, "pk"), 1+r.IntN(len(b.rows))), all, "")
		qb.add("big_order_limit", "The three largest measurements.",
			fmt.Sprintf("SELECT %s, %s FROM %s ORDER BY %s DESC, %s LIMIT 3", col(b, "pk"), col(b, "bnum"), qb.id(b.name), col(b, "bnum"), col(b, "pk")), all, "")
	}
}
