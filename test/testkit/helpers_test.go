package testkit_test

import "fmt"

const childEnv = "KOPGO_TESTKIT_CHILD"

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
