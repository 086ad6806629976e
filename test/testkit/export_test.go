package testkit

// ProcessesUnder is exported for the cleanup tests.
var ProcessesUnder = processesUnder

// BinDir and BinDirEnv are exported for the binary tests.
var BinDir = binDir

const BinDirEnv = binDirEnv
