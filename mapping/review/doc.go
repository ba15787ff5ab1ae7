// Package review is the annotation page of API mapping: a person reviews
// the mappings proposed for each query — by the model, after its
// self-reflection, and structurally — sees the candidate tools, the
// proposed pairs and field alignments with their reasoning, and accepts,
// rejects or corrects each. The reviewed mappings export as ground truth
// (mappings of provenance human).
//
// The page is plain HTML, CSS and JavaScript embedded in the binary;
// nothing is fetched from the internet. It works with the keyboard alone
// (j/k or the arrow keys to move, a accept, r reject, c correct, n/p next
// and previous query, e export, ? help), and every control is also a
// focusable button or field.
//
// Every annotation is appended to a journal (JSON lines, synced to disk
// before the request is answered), so reviewed work is never lost: a
// restart, a crash or a second annotator's session all read it back.
// Annotations are never overwritten: an annotator's later verdict on a
// proposal supersedes their earlier one, and when different annotators
// disagree on a tool pair both annotations are kept and the pair is
// flagged as a conflict — in the page and in the export.
package review
