package migrate_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/migrate"
	"github.com/kopgo/kopgo/test/testkit"
)

// TestUpgrade walks the upgrade scenario with both methods: objects at
// v1, half of them written by server-side apply; v2 added as the storage
// version; migrated; v1 unserved; migrated again; v1 dropped; then every
// object applied at v2 by the manager that applied it at v1. No write
// fails, every object ends stored at v2, storedVersions is pruned.
func TestUpgrade(t *testing.T) {
	for _, method := range []migrate.Method{migrate.Write, migrate.StorageVersionMigration} {
		t.Run(string(method), func(t *testing.T) {
			testUpgrade(t, method)
		})
	}
}

func testUpgrade(t *testing.T, method migrate.Method) {
	t.Helper()
	n := objectCount(t)
	ns := cluster.Namespace(t)
	crd := widgetCRD(t)
	u := &testkit.Upgrade{Cluster: cluster, CRD: crd, To: "v2"}
	var reports []migrate.Report
	failedWrites := 0
	times, err := u.Run(t.Context(),
		func(ctx context.Context) error {
			failed, err := populate(ctx, crd, "v1", ns, n)
			failedWrites += failed
			if err != nil {
				return err
			}
			if got := storedVersions(t, crd, ns, n); got["v1"] != n {
				t.Errorf("before the upgrade, stored versions %v, want %d at v1", got, n)
			}
			return nil
		},
		func(ctx context.Context) error {
			rep, err := migrate.Run(ctx, cluster.Client(), crd.Name, migrate.Options{Method: method})
			t.Logf("%s", rep)
			reports = append(reports, rep)
			return err
		})
	if err != nil {
		t.Fatal(err)
	}
	if got := storedVersions(t, crd, ns, n); got["v2"] != n {
		t.Errorf("after the upgrade, stored versions %v, want %d at v2", got, n)
	}
	start := time.Now()
	failed, err := applyAll(t.Context(), crd, "v2", ns, n)
	failedWrites += failed
	if err != nil {
		t.Errorf("apply at v2 after v1 was dropped: %d of %d failed, first: %v", failed, n, err)
	}
	t.Logf("%d objects (%s): populate %s, migration %s and %s, upgrade %s; apply of all at v2 after the drop %s; %d failed writes",
		n, method, times.Populate.Round(time.Millisecond), times.FirstMigration.Round(time.Millisecond),
		times.SecondMigration.Round(time.Millisecond), times.Total.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), failedWrites)
	if failedWrites != 0 {
		t.Errorf("%d failed writes, want 0", failedWrites)
	}

	first, second := reports[0], reports[1]
	if first.Method != method {
		t.Errorf("first migration by %s, want %s", first.Method, method)
	}
	// Every object was stored at v1 and named v1 in its managedFields.
	if first.ManagedFields != n {
		t.Errorf("first migration rewrote managedFields of %d objects, want %d", first.ManagedFields, n)
	}
	if method == migrate.Write && first.Rewritten != n {
		t.Errorf("first migration rewrote %d objects, want %d", first.Rewritten, n)
	}
	if !slices.Equal(first.StoredVersionsBefore, []string{"v1", "v2"}) || !slices.Equal(first.StoredVersions, []string{"v2"}) {
		t.Errorf("first migration: storedVersions %v -> %v, want [v1 v2] -> [v2]", first.StoredVersionsBefore, first.StoredVersions)
	}
	// The second one, after v1 stopped being served, finds nothing to do.
	if second.Rewritten != 0 || second.ManagedFields != 0 {
		t.Errorf("second migration rewrote %d objects (%d managedFields), want 0", second.Rewritten, second.ManagedFields)
	}
	if got := getCRD(t, crd.Name).Status.StoredVersions; !slices.Equal(got, []string{"v2"}) {
		t.Errorf("storedVersions %v, want [v2]", got)
	}
}

// TestWithoutManagedFieldsRewrite is kubernetes#111937: with the
// managedFields entries of v1 left in place, every server-side apply of
// an object applied at v1 fails once v1 is dropped.
func TestWithoutManagedFieldsRewrite(t *testing.T) {
	const n = 20
	ns := cluster.Namespace(t)
	crd := widgetCRD(t)
	u := &testkit.Upgrade{Cluster: cluster, CRD: crd, To: "v2"}
	_, err := u.Run(t.Context(),
		func(ctx context.Context) error { _, err := populate(ctx, crd, "v1", ns, n); return err },
		func(ctx context.Context) error {
			_, err := migrate.Run(ctx, cluster.Client(), crd.Name, migrate.Options{Method: migrate.Write, SkipManagedFields: true})
			return err
		})
	if err != nil {
		t.Fatal(err)
	}
	failed, err := applyAll(t.Context(), crd, "v2", ns, n)
	if failed != n || err == nil || !strings.Contains(err.Error(), "invalid group/version") {
		t.Fatalf("apply at v2 after v1 was dropped, managedFields not rewritten: %d of %d failed (%v), want all with \"invalid group/version\"", failed, n, err)
	}
	t.Logf("as kubernetes#111937: %d of %d applies failed: %v", failed, n, err)

	// Run again, rewriting: the objects are repaired after the fact.
	rep, err := migrate.Run(t.Context(), cluster.Client(), crd.Name, migrate.Options{Method: migrate.Write})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("repair: %s", rep)
	if failed, err := applyAll(t.Context(), crd, "v2", ns, n); failed != 0 {
		t.Errorf("apply at v2 after the repair: %d of %d failed: %v", failed, n, err)
	}
}

// TestNoOpWrite proves on etcd why writing an object back migrates it:
// the API server encodes it at the storage version and skips the etcd
// write only when the bytes equal what is stored.
func TestNoOpWrite(t *testing.T) {
	ns := cluster.Namespace(t)
	crd := widgetCRD(t)
	u := &testkit.Upgrade{Cluster: cluster, CRD: crd, To: "v2"}
	if err := u.Install(t.Context()); err != nil {
		t.Fatal(err)
	}
	c := cluster.Client()
	old := widget(crd, "v1", ns, "old", map[string]any{"size": int64(1)})
	if err := c.Create(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	if err := u.AddStorageVersion(t.Context()); err != nil {
		t.Fatal(err)
	}
	fresh := widget(crd, "v1", ns, "fresh", map[string]any{"size": int64(2)})
	if err := c.Create(t.Context(), fresh); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		before, after string
		written       bool
	}{
		{"old", "v1", "v2", true},    // stored at v1: the same object encodes to other bytes
		{"fresh", "v2", "v2", false}, // stored at v2 already: same bytes, no write
	} {
		key := testkit.StorageKey(crd.Spec.Group, "widgets", ns, tc.name)
		before, err := cluster.Stored(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		obj := widget(crd, "v2", ns, tc.name, nil)
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: tc.name}, obj); err != nil {
			t.Fatal(err)
		}
		if err := c.Update(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
		after, err := cluster.Stored(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: stored at %s (revision %d), after an unchanged update at %s (revision %d), resourceVersion %s",
			tc.name, before.APIVersion(), before.ModRevision, after.APIVersion(), after.ModRevision, obj.GetResourceVersion())
		if got, want := before.APIVersion(), crd.Spec.Group+"/"+tc.before; got != want {
			t.Errorf("%s stored at %s before the update, want %s", tc.name, got, want)
		}
		if got, want := after.APIVersion(), crd.Spec.Group+"/"+tc.after; got != want {
			t.Errorf("%s stored at %s after the update, want %s", tc.name, got, want)
		}
		if written := after.ModRevision != before.ModRevision; written != tc.written {
			t.Errorf("%s: etcd written: %t, want %t", tc.name, written, tc.written)
		}
	}
}

// TestRacingWrite: an object written at v1 during the migration (as by an
// API server that has not seen v2 become the storage version) is found by
// a check pass and rewritten before storedVersions is pruned; one that
// keeps being written at v1 keeps storedVersions from being pruned.
func TestRacingWrite(t *testing.T) {
	const n = 200
	for _, tc := range []struct {
		name    string
		forever bool
	}{{"once", false}, {"forever", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ns := cluster.Namespace(t)
			crd := widgetCRD(t)
			u := &testkit.Upgrade{Cluster: cluster, CRD: crd, To: "v2"}
			if err := u.Install(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, err := populate(t.Context(), crd, "v1", ns, n); err != nil {
				t.Fatal(err)
			}
			if err := u.AddStorageVersion(t.Context()); err != nil {
				t.Fatal(err)
			}
			target := widgetName(0)
			writes, raced := 0, 0
			var raceErr error
			rep, err := migrate.Run(t.Context(), cluster.Client(), crd.Name, migrate.Options{
				Method: migrate.Write, Workers: 1, MaxPasses: 3,
				Wrote: func(key string, _ bool) {
					writes++
					// Once the target is migrated, it is written at v1
					// again: once, or after each of its rewrites.
					if key == ns+"/"+target && (raced == 0 || tc.forever) {
						raced++
						if _, err := putStoredAt(t.Context(), crd, ns, target, "v1"); err != nil {
							raceErr = err
						}
					}
				},
			})
			if raceErr != nil {
				t.Fatal(raceErr)
			}
			t.Logf("%s (%d writes at v1 behind it)", rep, raced)
			stored := storedVersions(t, crd, ns, n)
			crdNow := getCRD(t, crd.Name)
			if tc.forever {
				if !errors.Is(err, migrate.ErrNotSettled) {
					t.Fatalf("Run: %v, want ErrNotSettled", err)
				}
				if stored["v1"] != 1 {
					t.Errorf("stored versions %v, want the target at v1", stored)
				}
				if !slices.Equal(crdNow.Status.StoredVersions, []string{"v1", "v2"}) {
					t.Errorf("storedVersions %v with an object at v1, want [v1 v2]", crdNow.Status.StoredVersions)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if stored["v2"] != n {
				t.Errorf("stored versions %v, want all %d at v2", stored, n)
			}
			if rep.Raced != 1 {
				t.Errorf("report: %d raced, want 1", rep.Raced)
			}
			if !slices.Equal(crdNow.Status.StoredVersions, []string{"v2"}) {
				t.Errorf("storedVersions %v, want [v2]", crdNow.Status.StoredVersions)
			}
		})
	}
}

// TestMigrator isolates the StorageVersionMigration method: with the
// managedFields rewrite off, Run writes nothing itself, the controller
// manager's migrator rewrites every object (etcd shows them at v2) and
// prunes storedVersions itself.
func TestMigrator(t *testing.T) {
	const n = 300
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
	rep, err := migrate.Run(t.Context(), cluster.Client(), crd.Name, migrate.Options{Method: migrate.StorageVersionMigration, SkipManagedFields: true})
	t.Logf("%s", rep)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ByMigrator != n || rep.Rewritten != 0 {
		t.Errorf("%d by the migrator, %d rewritten by Run, want %d and 0", rep.ByMigrator, rep.Rewritten, n)
	}
	if got := storedVersions(t, crd, ns, n); got["v2"] != n {
		t.Errorf("stored versions %v, want all %d at v2", got, n)
	}
	if got := getCRD(t, crd.Name).Status.StoredVersions; !slices.Equal(got, []string{"v2"}) {
		t.Errorf("storedVersions %v, want [v2]", got)
	}
}
