package testkit

import (
	"context"
	"fmt"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Upgrade is the path of an operator's CRD from one storage version to the
// next, step by step, as a release does it, for a test to run its own
// objects and its own migration through:
//
//	u := &testkit.Upgrade{Cluster: cluster, CRD: crdAtV1, To: "v2"}
//	u.Install(ctx)           // the CRD with v1 only, served and stored
//	... create objects at v1 (the operator's vN) ...
//	u.AddStorageVersion(ctx) // v2 added and made the storage version; v1 still served
//	... migrate (migrate.Run), check objects ...
//	u.Unserve(ctx)           // v1 no longer served: nobody writes at v1 any more
//	... migrate again: it rewrites only what was written at v1 meanwhile ...
//	u.Drop(ctx)              // v1 removed from the CRD (refused while storedVersions names it)
//
// or all of it with [Upgrade.Run]. Each step waits until the API server's
// discovery shows the versions the CRD now serves. The new version has the
// old one's schema unless [Upgrade.Version] says otherwise: custom
// resources convert between versions with the None strategy (apiVersion
// rewritten, nothing else) unless the CRD sets a conversion webhook.
type Upgrade struct {
	// Cluster is the cluster the CRD is installed in.
	Cluster *Cluster
	// CRD is the CRD at the old version: exactly one version, served and
	// the storage version.
	CRD *apiextensionsv1.CustomResourceDefinition
	// To is the new version's name.
	To string
	// Version, if set, is the new version (its Name is set to To and its
	// Served and Storage flags by AddStorageVersion). Default: a copy of
	// the old version.
	Version *apiextensionsv1.CustomResourceDefinitionVersion
}

// From is the old version's name.
func (u *Upgrade) From() string { return u.CRD.Spec.Versions[0].Name }

// Install creates the CRD and waits until it is established and served.
func (u *Upgrade) Install(ctx context.Context) error {
	if n := len(u.CRD.Spec.Versions); n != 1 {
		return fmt.Errorf("Upgrade of CRD %s: field spec.versions: %d versions, want the old one only", u.CRD.Name, n)
	}
	crd := u.CRD.DeepCopy()
	if err := u.Cluster.client.Create(ctx, crd); err != nil {
		return fmt.Errorf("create CRD %s: %w", crd.Name, err)
	}
	return u.waitServed(ctx, []string{u.From()})
}

// AddStorageVersion adds the new version, served, as the storage
// version; the old one stays served.
func (u *Upgrade) AddStorageVersion(ctx context.Context) error {
	v := u.CRD.Spec.Versions[0].DeepCopy()
	if u.Version != nil {
		v = u.Version.DeepCopy()
	}
	v.Name, v.Served, v.Storage = u.To, true, true
	if err := u.update(ctx, func(crd *apiextensionsv1.CustomResourceDefinition) {
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].Storage = false
		}
		if !slices.ContainsFunc(crd.Spec.Versions, func(x apiextensionsv1.CustomResourceDefinitionVersion) bool { return x.Name == u.To }) {
			crd.Spec.Versions = append(crd.Spec.Versions, *v)
		}
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == u.To
		}
	}); err != nil {
		return err
	}
	return u.waitServed(ctx, []string{u.From(), u.To})
}

// Unserve stops serving the old version. Objects stay readable at the new
// one; clients still at the old version get 404.
func (u *Upgrade) Unserve(ctx context.Context) error {
	if err := u.update(ctx, func(crd *apiextensionsv1.CustomResourceDefinition) {
		for i := range crd.Spec.Versions {
			if crd.Spec.Versions[i].Name == u.From() {
				crd.Spec.Versions[i].Served = false
			}
		}
	}); err != nil {
		return err
	}
	return u.waitServed(ctx, []string{u.To})
}

// Drop removes the old version from the CRD. The API server refuses while
// status.storedVersions still names it: objects may be stored at it.
func (u *Upgrade) Drop(ctx context.Context) error {
	if err := u.update(ctx, func(crd *apiextensionsv1.CustomResourceDefinition) {
		crd.Spec.Versions = slices.DeleteFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool {
			return v.Name == u.From()
		})
	}); err != nil {
		return err
	}
	return u.waitServed(ctx, []string{u.To})
}

// UpgradeTimes are the durations of [Upgrade.Run]'s steps.
type UpgradeTimes struct {
	// Populate, FirstMigration and SecondMigration are the callbacks'.
	Populate, FirstMigration, SecondMigration time.Duration
	// Total is the whole run.
	Total time.Duration
}

// Run walks the whole path: Install, populate (create the objects),
// AddStorageVersion, migrate, Unserve, migrate again, Drop. A nil
// callback is skipped.
func (u *Upgrade) Run(ctx context.Context, populate, migrate func(context.Context) error) (UpgradeTimes, error) {
	var t UpgradeTimes
	start := time.Now()
	timed := func(d *time.Duration, f func(context.Context) error) error {
		if f == nil {
			return nil
		}
		s := time.Now()
		err := f(ctx)
		*d = time.Since(s)
		return err
	}
	steps := []struct {
		name string
		f    func() error
	}{
		{"install", func() error { return u.Install(ctx) }},
		{"populate", func() error { return timed(&t.Populate, populate) }},
		{"add the storage version", func() error { return u.AddStorageVersion(ctx) }},
		{"migrate", func() error { return timed(&t.FirstMigration, migrate) }},
		{"stop serving the old version", func() error { return u.Unserve(ctx) }},
		{"migrate again", func() error { return timed(&t.SecondMigration, migrate) }},
		{"drop the old version", func() error { return u.Drop(ctx) }},
	}
	for _, s := range steps {
		if err := s.f(); err != nil {
			t.Total = time.Since(start)
			return t, fmt.Errorf("upgrade CRD %s from %s to %s: %s: %w", u.CRD.Name, u.From(), u.To, s.name, err)
		}
	}
	t.Total = time.Since(start)
	return t, nil
}

func (u *Upgrade) update(ctx context.Context, change func(*apiextensionsv1.CustomResourceDefinition)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := u.Cluster.client.Get(ctx, client.ObjectKey{Name: u.CRD.Name}, crd); err != nil {
			return fmt.Errorf("get CRD %s: %w", u.CRD.Name, err)
		}
		change(crd)
		if err := u.Cluster.client.Update(ctx, crd); err != nil {
			if apierrors.IsConflict(err) {
				return err
			}
			return fmt.Errorf("update CRD %s: %w", u.CRD.Name, err)
		}
		return nil
	})
}

// waitServed waits until discovery serves the resource at exactly the
// versions given, and the CRD is established.
func (u *Upgrade) waitServed(ctx context.Context, versions []string) error {
	dc, err := discovery.NewDiscoveryClientForConfig(u.Cluster.Config)
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	group, plural := u.CRD.Spec.Group, u.CRD.Spec.Names.Plural
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := u.Cluster.client.Get(ctx, client.ObjectKey{Name: u.CRD.Name}, crd); err != nil {
			last = err
			return false, nil
		}
		established := false
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				established = true
			}
		}
		if !established {
			last = fmt.Errorf("CRD %s not established", u.CRD.Name)
			return false, nil
		}
		for _, v := range crd.Spec.Versions {
			want := slices.Contains(versions, v.Name)
			resources, err := dc.ServerResourcesForGroupVersion(group + "/" + v.Name)
			served := err == nil && slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == plural })
			if served != want {
				last = fmt.Errorf("%s/%s %s served: %t, want %t", group, v.Name, plural, served, want)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for CRD %s to serve %v: %w (last: %w)", u.CRD.Name, versions, err, last)
	}
	return nil
}
