package toolbench

// DecodeDocBy is decodeDocBy, for the external tests.
var DecodeDocBy = decodeDocBy

// DecodeToolFile is decodeToolFile, for the external tests.
var DecodeToolFile = decodeToolFile
