// Package shareddata finds the project's shared data folder
// (../shared/data beside the repository) for tests and benchmarks.
package shareddata
