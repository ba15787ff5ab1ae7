// Package truth holds exact ground truth for API mapping and scores
// mappings against it: precision, recall and F1 of the recovered tool
// pairs and of the field alignments (arguments and response fields), over
// everything and over what changed.
//
// Ground truth comes from where it is exact:
//
//   - a drift manifest (FromDrift): every tool of version N has its
//     counterpart in version N+1, and the manifest says which argument
//     and response field became which, through renames and nesting;
//   - the SEL tools of an NL2SQL build (FromSELMeta): each names the SLOT
//     operation it specialises and the arguments it fixes;
//   - human review (package review exports it in the same shape).
package truth
