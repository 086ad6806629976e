package migrate

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// maxAttempts bounds the writes of one object refused for a concurrent
// write.
const maxAttempts = 10

// migration is one Run.
type migration struct {
	c    client.Client
	info crdInfo
	opts Options
	rep  *Report

	mu    sync.Mutex
	known map[string]string // object key -> resourceVersion once migrated
	// checkpoint is the storage version migrator's resourceVersion: it
	// rewrote every object whose resourceVersion is not above it.
	checkpoint string
}

func objectKey(o client.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// firstPass lists every object page by page at the storage version and
// writes back all of them (all) or those whose managedFields name another
// version.
func (m *migration) firstPass(ctx context.Context, all bool) error {
	return m.eachPage(ctx, func() client.ObjectList { return m.emptyList() }, func(list client.ObjectList) ([]func(context.Context) error, error) {
		items := list.(*unstructured.UnstructuredList).Items
		m.mu.Lock()
		m.rep.Objects += len(items)
		m.mu.Unlock()
		var work []func(context.Context) error
		for i := range items {
			obj := &items[i]
			if all || m.staleFields(obj.GetManagedFields()) {
				work = append(work, func(ctx context.Context) error { return m.write(ctx, obj) })
			}
		}
		return work, nil
	})
}

// settle runs check passes until one finds every object migrated: its
// resourceVersion is the one this run's write left (or, with the
// migrator, not above its checkpoint) and no managedFields entry names
// another version. Each object that is not is read again and written
// again; so is an object created meanwhile.
func (m *migration) settle(ctx context.Context) error {
	for pass := 1; pass <= m.opts.MaxPasses; pass++ {
		m.rep.Passes = pass
		redo := 0
		byMigrator := 0
		err := m.eachPage(ctx, m.emptyMetadataList, func(list client.ObjectList) ([]func(context.Context) error, error) {
			var work []func(context.Context) error
			for i := range list.(*metav1.PartialObjectMetadataList).Items {
				item := &list.(*metav1.PartialObjectMetadataList).Items[i]
				key, rv := objectKey(item), item.GetResourceVersion()
				done, viaMigrator, err := m.migrated(key, rv)
				if err != nil {
					return nil, err
				}
				if done && !m.staleFields(item.GetManagedFields()) {
					if viaMigrator {
						byMigrator++
					}
					continue
				}
				redo++
				work = append(work, func(ctx context.Context) error { return m.rewrite(ctx, item.GetNamespace(), item.GetName()) })
			}
			return work, nil
		})
		if err != nil {
			return err
		}
		if pass == 1 {
			m.rep.ByMigrator = byMigrator
		}
		if redo == 0 {
			return nil
		}
		m.mu.Lock()
		m.rep.Raced += redo
		m.mu.Unlock()
	}
	return fmt.Errorf("%s %s: %d check passes, each found objects changed since they were migrated: %w",
		m.info.kind, m.info.plural, m.opts.MaxPasses, ErrNotSettled)
}

func (m *migration) migrated(key, rv string) (done, viaMigrator bool, err error) {
	m.mu.Lock()
	known, ok := m.known[key]
	m.mu.Unlock()
	if ok && known == rv {
		return true, false, nil
	}
	if m.checkpoint == "" {
		return false, false, nil
	}
	cmp, err := resourceversion.CompareResourceVersion(rv, m.checkpoint)
	if err != nil {
		return false, false, fmt.Errorf("%s %s: field metadata.resourceVersion %q: %w", m.info.kind, key, rv, err)
	}
	return cmp <= 0, cmp <= 0, nil
}

func (m *migration) staleFields(entries []metav1.ManagedFieldsEntry) bool {
	return !m.opts.SkipManagedFields && len(Stale(entries, m.info.group, m.info.storage)) > 0
}

// rewrite reads an object at the storage version and writes it back.
func (m *migration) rewrite(ctx context.Context, namespace, name string) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(m.info.gvk())
	if err := m.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			m.count(func(r *Report) { r.Gone++ })
			return nil
		}
		return fmt.Errorf("get %s %s: %w", m.info.kind, client.ObjectKey{Namespace: namespace, Name: name}, err)
	}
	return m.write(ctx, obj)
}

// write writes obj back as read, at the storage version, with its
// managedFields rewritten: the API server encodes it at the storage
// version, and stores it unless the bytes equal what etcd holds (then the
// resourceVersion stays). A conflict is resolved by reading the object
// again.
func (m *migration) write(ctx context.Context, obj *unstructured.Unstructured) error {
	key := objectKey(obj)
	nn := client.ObjectKeyFromObject(obj)
	for attempt := 1; ; attempt++ {
		before := obj.GetResourceVersion()
		fieldsRewritten := false
		if !m.opts.SkipManagedFields {
			entries, changed, err := RewriteManagedFields(obj.GetManagedFields(), m.info.group, m.info.storage, m.opts.Renames)
			if err != nil {
				return fmt.Errorf("%s %s: %w", m.info.kind, key, err)
			}
			if changed {
				obj.SetManagedFields(entries)
				fieldsRewritten = true
			}
		}
		err := m.c.Update(ctx, obj, client.FieldOwner(m.opts.FieldManager))
		switch {
		case apierrors.IsNotFound(err):
			m.count(func(r *Report) { r.Gone++ })
			return nil
		case apierrors.IsConflict(err) && attempt < maxAttempts:
			m.count(func(r *Report) { r.Conflicts++ })
			obj = &unstructured.Unstructured{}
			obj.SetGroupVersionKind(m.info.gvk())
			if err := m.c.Get(ctx, nn, obj); err != nil {
				if apierrors.IsNotFound(err) {
					m.count(func(r *Report) { r.Gone++ })
					return nil
				}
				return fmt.Errorf("get %s %s after a conflict: %w", m.info.kind, key, err)
			}
			continue
		case err != nil:
			return fmt.Errorf("write %s %s at %s/%s: %w", m.info.kind, key, m.info.group, m.info.storage, err)
		}
		// The API server keeps the managedFields it had when it cannot
		// use the ones sent (it logs and carries on), so look.
		if stale := Stale(obj.GetManagedFields(), m.info.group, m.info.storage); fieldsRewritten && len(stale) > 0 {
			return fmt.Errorf("%s %s: field metadata.managedFields: the API server kept entries of versions %v", m.info.kind, key, stale)
		}
		changed := obj.GetResourceVersion() != before
		m.mu.Lock()
		m.known[key] = obj.GetResourceVersion()
		if changed {
			m.rep.Rewritten++
		} else {
			m.rep.Current++
		}
		if fieldsRewritten {
			m.rep.ManagedFields++
		}
		m.mu.Unlock()
		if m.opts.Wrote != nil {
			m.opts.Wrote(key, changed)
		}
		return nil
	}
}

func (m *migration) count(f func(*Report)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(m.rep)
}

func (m *migration) emptyMetadataList() client.ObjectList {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(m.emptyList().GroupVersionKind())
	return l
}

// eachPage lists page by page and runs the work each page yields on
// Options.Workers goroutines, a page at a time. A continue token that
// expired (410 Gone) restarts the list: objects already migrated are
// written again, which stores nothing.
func (m *migration) eachPage(ctx context.Context, newList func() client.ObjectList, page func(client.ObjectList) ([]func(context.Context) error, error)) error {
	cont := ""
	for {
		list := newList()
		err := m.c.List(ctx, list, client.Limit(m.opts.PageSize), client.Continue(cont))
		if apierrors.IsResourceExpired(err) && cont != "" {
			cont = ""
			continue
		}
		if err != nil {
			return fmt.Errorf("list %s: %w", m.info.plural+"."+m.info.group, err)
		}
		work, err := page(list)
		if err != nil {
			return err
		}
		if err := m.run(ctx, work); err != nil {
			return err
		}
		if cont = list.(interface{ GetContinue() string }).GetContinue(); cont == "" {
			return nil
		}
	}
}

// run runs work on Options.Workers goroutines and returns the errors.
func (m *migration) run(parent context.Context, work []func(context.Context) error) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	jobs := make(chan func(context.Context) error)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range m.opts.Workers {
		wg.Go(func() {
			for job := range jobs {
				if err := job(ctx); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					cancel()
				}
			}
		})
	}
feed:
	for _, job := range work {
		select {
		case jobs <- job:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if len(errs) == 0 {
		return parent.Err()
	}
	if len(errs) > 3 {
		errs = append(errs[:3], fmt.Errorf("and %d more errors", len(errs)-3))
	}
	return errors.Join(errs...)
}
