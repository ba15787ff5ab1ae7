// Package endstate compares the state an episode leaves with the state
// its task expects, and turns the comparison into a reward.
//
// A stateful task (one that writes) is judged on what it changed, as
// τ²-bench judges its database and AppWorld its side effects. A world
// (backend/sqltools/world) reports its end state as Changes: per table,
// every row whose contents differ from the initial state, before and
// after. A generated write task carries the Changes its gold calls make
// in a fresh world (meta.end_state); a user's task carries end-state
// checks (Task.Checks: SQL queries with their expected rows, or read-tool
// calls with their expected answers).
//
// Score combines four binary checks, each present only when the task
// asks for it:
//
//   - state: the world's changes, over the tables the gold end state
//     changes, equal the gold's (compared by primary key, or by whole
//     rows in a table without one; numbers compared by value);
//   - collateral: nothing changed outside the gold's rows, in any table
//     (AppWorld's collateral-damage check);
//   - checks: every end-state check holds;
//   - answer: the final answer equals the gold answer, where the task
//     asks a question too.
//
// Success is their product: 1 when every check the task has holds, else
// 0. A wrong write — another row changed, an extra row, a row missing, a
// wrong value — fails state (and, but for a wrong value or a missing
// row, collateral), so it scores 0. F1 is the graded alternative, the F1
// of the rows changed as the gold changes them against every row
// changed, times the other checks; episodes may be rewarded with it
// (reward.success "state_f1").
package endstate
