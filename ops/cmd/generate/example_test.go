package main

import (
	"fmt"
	"os"
)

// The generator writes every file of the kit under the directory it is
// given (make generate gives it the ops module's root).
func Example() {
	dir, err := os.MkdirTemp("", "kopgo-ops")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := os.Chdir(dir); err != nil {
		fmt.Println(err)
		return
	}
	if err := generate("."); err != nil {
		fmt.Println(err)
	}
	// Output:
	// wrote dashboards/kopgo.json
	// wrote manifests/metrics-rbac.yaml
	// wrote manifests/prometheusrule.yaml
	// wrote manifests/rules.yaml
	// wrote manifests/servicemonitor.yaml
}
