// Package mapeval measures API mappings: against exact ground truth (a
// drift manifest, the SEL tools' own metadata, an obfuscation's mapping
// file) and at work (calls written against old documentation on a
// drifted collection, with and without the repair adapter; a
// collection's tasks with its backend down, with and without failover to
// a structurally mapped alternative). The toolenv map eval commands
// print what it returns.
package mapeval
