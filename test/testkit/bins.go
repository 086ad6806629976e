package testkit

import (
	"fmt"
	"os"
	"path/filepath"
)

// binDirEnv names the environment variable that points at the directory of
// testkit binaries. `make test` sets it to bin/testkit.
const binDirEnv = "KOPGO_TESTKIT_BIN"

// binaries are the paths of the components a cluster runs, and of kwok's
// own stages (nodes turn Ready and keep their leases, deleted pods go away),
// written from the kwok module by the tools build. The pod stages that decide
// a pod's outcome are testkit's own (stages.go).
type binaries struct {
	etcd, apiserver, controllerManager, scheduler, kwok, kwokBaseStages, provisioner string
}

// binDir returns the directory the testkit takes its binaries from, as
// [Options.BinDir] describes.
func binDir(dir string) string {
	if dir != "" {
		return dir
	}
	if env := os.Getenv(binDirEnv); env != "" {
		return env
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		candidate := filepath.Join(d, "bin", "testkit")
		if st, err := os.Stat(candidate); err == nil && st.IsDir() {
			return candidate
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

func findBinaries(dir string, full bool) (binaries, error) {
	dir = binDir(dir)
	if dir == "" {
		return binaries{}, fmt.Errorf("%w: no bin/testkit above the working directory and %s is not set: run `make testkit-bin` in the kopgo repository, or set %s to a directory holding etcd and kube-apiserver",
			errNoBinaries, binDirEnv, binDirEnv)
	}
	b := binaries{
		etcd:              filepath.Join(dir, "etcd"),
		apiserver:         filepath.Join(dir, "kube-apiserver"),
		controllerManager: filepath.Join(dir, "kube-controller-manager"),
		scheduler:         filepath.Join(dir, "kube-scheduler"),
		kwok:              filepath.Join(dir, "kwok"),
		kwokBaseStages:    filepath.Join(dir, "kwok-base-stages.yaml"),
		provisioner:       filepath.Join(dir, "provisioner"),
	}
	need := []string{b.etcd, b.apiserver}
	if full {
		need = append(need, b.controllerManager, b.scheduler, b.kwok, b.kwokBaseStages, b.provisioner)
	}
	for _, p := range need {
		if _, err := os.Stat(p); err != nil {
			return binaries{}, fmt.Errorf("%w: %s is missing: build it with `make testkit-bin` (or point %s at a directory that has it)",
				errNoBinaries, p, binDirEnv)
		}
	}
	return b, nil
}
