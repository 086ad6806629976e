package migrate_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/migrate"
	"github.com/kopgo/kopgo/test/testkit"
)

// helperEnv makes the test binary a migration process: it runs
// migrate.Run for the CRD named in it, against $KOPGO_MIGRATE_KUBECONFIG,
// and prints a line for each object it wrote, until it is killed.
const helperEnv = "KOPGO_MIGRATE_HELPER_CRD"

func helperMain() int {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KOPGO_MIGRATE_KUBECONFIG"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	w := bufio.NewWriter(os.Stdout)
	_, err = migrate.Run(context.Background(), c, os.Getenv(helperEnv), migrate.Options{
		Method: migrate.Write, Workers: 1,
		Wrote: func(key string, _ bool) {
			fmt.Fprintln(w, key)
			_ = w.Flush()
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestKilledMidway: a migration process killed (SIGKILL) half-way leaves
// storedVersions unpruned; Run again finishes the job, rewriting only the
// objects still stored at v1.
func TestKilledMidway(t *testing.T) {
	const n, killAt = 400, 150
	ns := cluster.Namespace(t)
	crd := widgetCRD(t)
	u := &testkit.Upgrade{Cluster: cluster, CRD: crd, To: "v2"}
	if err := u.Install(t.Context()); err != nil {
		t.Fatal(err)
	}
	if failed, err := populate(t.Context(), crd, "v1", ns, n); failed > 0 {
		t.Fatal(err)
	}
	if err := u.AddStorageVersion(t.Context()); err != nil {
		t.Fatal(err)
	}

	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+crd.Name, "KOPGO_MIGRATE_KUBECONFIG="+cluster.Kubeconfig)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	seen := 0
	for seen < killAt && lines.Scan() {
		seen++
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if seen < killAt {
		t.Fatalf("the migration process wrote %d objects before it ended, want it killed after %d", seen, killAt)
	}

	stored := storedVersions(t, crd, ns, n)
	t.Logf("killed after %d writes seen: stored versions %v", seen, stored)
	if stored["v1"] == 0 || stored["v2"] < killAt {
		t.Fatalf("stored versions %v after the kill, want some at each", stored)
	}
	if got := getCRD(t, crd.Name).Status.StoredVersions; !slices.Equal(got, []string{"v1", "v2"}) {
		t.Errorf("storedVersions %v after the kill, want [v1 v2]", got)
	}

	rep, err := migrate.Run(t.Context(), cluster.Client(), crd.Name, migrate.Options{Method: migrate.Write})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("run again: %s", rep)
	if rep.Rewritten != stored["v1"] || rep.Current != stored["v2"] {
		t.Errorf("run again: %d rewritten, %d current, want %d and %d", rep.Rewritten, rep.Current, stored["v1"], stored["v2"])
	}
	if got := storedVersions(t, crd, ns, n); got["v2"] != n {
		t.Errorf("stored versions %v, want all %d at v2", got, n)
	}
	if got := getCRD(t, crd.Name).Status.StoredVersions; !slices.Equal(got, []string{"v2"}) {
		t.Errorf("storedVersions %v, want [v2]", got)
	}
}
