package toolbench

// DecodeDocBy is decodeDocBy, for the external tests.
var DecodeDocBy = decodeDocBy
