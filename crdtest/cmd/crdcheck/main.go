// Command crdcheck checks CustomResourceDefinition manifests as the API
// server checks a CRD it is asked to create (with [crdtest.CheckCRD]: a
// structural schema, x-kubernetes-validations rules that compile, and
// their estimated cost within the server's limits), offline, so that a CRD
// the server would refuse is found when it is generated rather than on a
// cluster:
//
//	go run github.com/kopgo/kopgo/crdtest/cmd/crdcheck config/crd/bases
//
// Each argument is a YAML or JSON file or a directory of them, as
// [crdtest.ReadCRDs] reads. It prints one line per CRD, and the server's
// errors under a refused one, and exits 1 if any CRD would be refused or
// an argument holds none (2 on bad usage).
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/kopgo/kopgo/crdtest"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: crdcheck FILE|DIR...")
		return 2
	}
	code := 0
	for _, path := range args {
		crds, err := crdtest.ReadCRDs(path)
		if err != nil {
			fmt.Fprintf(stderr, "crdcheck: %v\n", err)
			code = 1
			continue
		}
		if len(crds) == 0 {
			fmt.Fprintf(stderr, "crdcheck: %s: no CustomResourceDefinition\n", path)
			code = 1
			continue
		}
		for _, crd := range crds {
			errs := crdtest.CheckCRD(ctx, crd)
			if len(errs) == 0 {
				fmt.Fprintf(stdout, "ok      %s (%s)\n", crd.Name, path)
				continue
			}
			code = 1
			fmt.Fprintf(stdout, "REFUSED %s (%s):\n", crd.Name, path)
			for _, e := range errs {
				fmt.Fprintf(stdout, "\t%v\n", e)
			}
		}
	}
	return code
}
