package migrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Method is how stored objects are rewritten.
type Method string

const (
	// Auto uses [StorageVersionMigration] where the API server serves
	// storagemigration.k8s.io/v1 and a migrator answers, [Write] otherwise.
	Auto Method = ""
	// StorageVersionMigration creates a StorageVersionMigration and waits
	// for the controller manager's storage version migrator.
	StorageVersionMigration Method = "StorageVersionMigration"
	// Write lists the objects page by page and writes each back.
	Write Method = "Write"
)

// Options tune [Run]. The zero value migrates with [Auto], rewrites
// managedFields and prunes storedVersions.
type Options struct {
	// Method chooses how objects are rewritten. Default [Auto].
	Method Method
	// Renames are fields a version names differently from the storage
	// version, for the managedFields rewrite.
	Renames []Rename
	// SkipManagedFields leaves managedFields entries that name other
	// versions in place. Server-side apply then fails once such a version
	// is removed from the CRD (kubernetes#111937); this exists to show it.
	SkipManagedFields bool
	// NoPrune leaves status.storedVersions as it is.
	NoPrune bool
	// PageSize is the list page size. Default 500.
	PageSize int64
	// Workers is the number of concurrent writes. Default 4.
	Workers int
	// MaxPasses bounds the check passes after the first one: a pass
	// lists every object and writes again those that changed since they
	// were migrated; Run returns when a pass finds none. Default 5.
	MaxPasses int
	// FieldManager names the writes. Default "kopgo-migrate".
	FieldManager string
	// MigratorTimeout is how long [Auto] waits for the storage version
	// migrator to take a StorageVersionMigration up (set its resource
	// version) before it writes the objects itself. Default 90 s: the
	// migrator needs the garbage collector's cache of the resource, which
	// knows a new custom resource type only after its next discovery
	// (every 30 s).
	MigratorTimeout time.Duration
	// Wrote, if set, is called after every write of an object, with the
	// object's key (namespace/name) and whether the write changed what is
	// stored. For progress and for tests.
	Wrote func(key string, changed bool)
}

func (o *Options) defaults() {
	if o.PageSize <= 0 {
		o.PageSize = 500
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.MaxPasses <= 0 {
		o.MaxPasses = 5
	}
	if o.FieldManager == "" {
		o.FieldManager = "kopgo-migrate"
	}
	if o.MigratorTimeout <= 0 {
		o.MigratorTimeout = 90 * time.Second
	}
}

// Report says what [Run] did.
type Report struct {
	// CRD is the CustomResourceDefinition's name.
	CRD string
	// StorageVersion is the version objects were migrated to.
	StorageVersion string
	// Method is how the objects were rewritten.
	Method Method
	// Objects is the number of objects the first pass found.
	Objects int
	// Rewritten counts writes that changed what etcd holds (the object's
	// resourceVersion moved): objects stored at another version, or with
	// managedFields entries of another version.
	Rewritten int
	// Current counts writes that changed nothing: the object was stored
	// at the storage version already, with nothing to rewrite.
	Current int
	// ManagedFields counts objects whose managedFields named another
	// version and were rewritten.
	ManagedFields int
	// ByMigrator counts objects the storage version migrator rewrote
	// (from its status), with [StorageVersionMigration].
	ByMigrator int
	// Gone counts objects deleted while they were migrated.
	Gone int
	// Conflicts counts writes refused for a concurrent write, and done
	// again on the object read anew.
	Conflicts int
	// Raced counts objects a check pass found changed by another writer
	// since they were migrated (or created meanwhile), and wrote again.
	Raced int
	// Passes is the number of check passes after the first pass.
	Passes int
	// StoredVersionsBefore and StoredVersions are the CRD's
	// status.storedVersions at the start and at the end.
	StoredVersionsBefore, StoredVersions []string
	// Pruned is true if this run pruned storedVersions (false if there was
	// nothing to prune, or the migrator did it).
	Pruned bool
	// Duration is the time Run took.
	Duration time.Duration
}

// String is a one-line summary.
func (r Report) String() string {
	return fmt.Sprintf("CRD %s to %s by %s: %d objects, %d rewritten, %d current, %d managedFields rewritten, %d by migrator, %d gone, %d conflicts, %d raced, %d check passes, storedVersions %v -> %v in %s",
		r.CRD, r.StorageVersion, r.Method, r.Objects, r.Rewritten, r.Current, r.ManagedFields, r.ByMigrator, r.Gone, r.Conflicts, r.Raced, r.Passes,
		r.StoredVersionsBefore, r.StoredVersions, r.Duration.Round(time.Millisecond))
}

// ErrCRDChanged is returned (wrapped) when the CRD's spec changed during
// the migration, for example its storage version: storedVersions is then
// not pruned, and Run must be called again.
var ErrCRDChanged = errors.New("CRD changed during the migration")

// ErrNotSettled is returned (wrapped) when objects kept changing through
// [Options.MaxPasses] check passes: storedVersions is not pruned.
var ErrNotSettled = errors.New("objects kept changing")

// crdInfo is what Run needs from the CRD.
type crdInfo struct {
	name, group, kind, listKind, plural, storage string
	namespaced                                   bool
	generation                                   int64
	storedVersions                               []string
}

func (i crdInfo) gvk() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: i.group, Version: i.storage, Kind: i.kind}
}

// Run migrates every stored object of the CRD named crdName to its
// current storage version, rewrites managedFields entries that name other
// versions, checks that nothing changed behind it, and prunes the CRD's
// status.storedVersions to the storage version. It is stateless: after a
// crash, call it again. c needs get, list and update on the custom
// resource, get and update on the CRD's status, and with
// [StorageVersionMigration] create, get and delete on
// storageversionmigrations; its scheme does not matter (everything goes
// through unstructured objects).
//
// The report is filled as far as Run got, also with an error.
func Run(ctx context.Context, c client.Client, crdName string, opts Options) (rep Report, _ error) {
	opts.defaults()
	start := time.Now()
	rep = Report{CRD: crdName}
	defer func() { rep.Duration = time.Since(start) }()

	info, err := readCRD(ctx, c, crdName)
	if err != nil {
		return rep, err
	}
	rep.StorageVersion = info.storage
	rep.StoredVersionsBefore = info.storedVersions
	rep.StoredVersions = info.storedVersions

	m := &migration{c: c, info: info, opts: opts, rep: &rep, known: map[string]string{}}
	method, err := m.chooseMethod(ctx)
	if err != nil {
		return rep, err
	}
	rep.Method = method
	if method == StorageVersionMigration {
		err = m.viaMigrator(ctx)
	} else {
		err = m.firstPass(ctx, true)
	}
	if err != nil {
		return rep, err
	}
	if err := m.settle(ctx); err != nil {
		return rep, err
	}
	if opts.NoPrune {
		return rep, nil
	}
	return rep, m.prune(ctx)
}

func readCRD(ctx context.Context, c client.Client, name string) (crdInfo, error) {
	crd, err := getCRD(ctx, c, name)
	if err != nil {
		return crdInfo{}, err
	}
	info := crdInfo{
		name: name, group: crd.Spec.Group, kind: crd.Spec.Names.Kind, listKind: crd.Spec.Names.ListKind,
		plural: crd.Spec.Names.Plural, namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		generation: crd.Generation, storedVersions: slices.Clone(crd.Status.StoredVersions),
	}
	if info.listKind == "" {
		info.listKind = info.kind + "List"
	}
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			info.storage = v.Name
		}
	}
	if info.storage == "" {
		return info, fmt.Errorf("CustomResourceDefinition %s: field spec.versions: no version has storage: true", name)
	}
	return info, nil
}

var crdGVK = apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")

// getCRD reads a CRD through an unstructured object, so that c's scheme
// needs no apiextensions types.
func getCRD(ctx context.Context, c client.Client, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(crdGVK)
	if err := c.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
		return nil, fmt.Errorf("get CustomResourceDefinition %s: %w", name, err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
		return nil, fmt.Errorf("read CustomResourceDefinition %s: %w", name, err)
	}
	return crd, nil
}

// prune sets status.storedVersions to the storage version, if the CRD's
// spec is still the one the migration started with.
func (m *migration) prune(ctx context.Context) error {
	crd, err := getCRD(ctx, m.c, m.info.name)
	if err != nil {
		return err
	}
	if crd.Generation != m.info.generation {
		return fmt.Errorf("CustomResourceDefinition %s: field metadata.generation: %d at the start, %d now: %w",
			m.info.name, m.info.generation, crd.Generation, ErrCRDChanged)
	}
	m.rep.StoredVersions = slices.Clone(crd.Status.StoredVersions)
	if slices.Equal(crd.Status.StoredVersions, []string{m.info.storage}) {
		return nil
	}
	crd.Status.StoredVersions = []string{m.info.storage}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		return fmt.Errorf("CustomResourceDefinition %s: %w", m.info.name, err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(crdGVK)
	// The update carries the resourceVersion just read: a change of the
	// CRD since then is a conflict, never overwritten.
	if err := m.c.Status().Update(ctx, u, client.FieldOwner(m.opts.FieldManager)); err != nil {
		return fmt.Errorf("prune CustomResourceDefinition %s field status.storedVersions to [%s]: %w", m.info.name, m.info.storage, err)
	}
	m.rep.StoredVersions = []string{m.info.storage}
	m.rep.Pruned = true
	return nil
}

// emptyList is a list of the custom resource at the storage version.
func (m *migration) emptyList() *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.GroupVersionKind{Group: m.info.group, Version: m.info.storage, Kind: m.info.listKind})
	return l
}
