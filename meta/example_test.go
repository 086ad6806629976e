package meta_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	kopmeta "github.com/kopgo/kopgo/meta"
)

// A ConfigMap's metadata, controlled by the Deployment that uses it. The
// Deployment was read through a client, so its TypeMeta is empty: its kind
// comes from the scheme (a reconciler has the manager's).
func Example() {
	web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "6f1c"}}

	om, err := kopmeta.New("web-config").
		Namespace("shop").
		Labels(map[string]string{"app.kubernetes.io/name": "web"}).
		Annotations(map[string]string{"example.com/owner-team": "payments"}).
		Finalizer("example.com/cleanup").
		ControlledBy(web, scheme).
		Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	out, _ := json.MarshalIndent(om, "", "  ")
	fmt.Println(string(out))
	// Output:
	// {
	//   "name": "web-config",
	//   "namespace": "shop",
	//   "labels": {
	//     "app.kubernetes.io/name": "web"
	//   },
	//   "annotations": {
	//     "example.com/owner-team": "payments"
	//   },
	//   "ownerReferences": [
	//     {
	//       "apiVersion": "apps/v1",
	//       "kind": "Deployment",
	//       "name": "web",
	//       "uid": "6f1c",
	//       "controller": true,
	//       "blockOwnerDeletion": true
	//     }
	//   ],
	//   "finalizers": [
	//     "example.com/cleanup"
	//   ]
	// }
}

// The apply form drops into any client-go apply configuration.
func ExampleBuilder_ApplyConfiguration() {
	meta, err := kopmeta.New("settings").Namespace("shop").Labels(map[string]string{"tier": "web"}).ApplyConfiguration()
	if err != nil {
		fmt.Println(err)
		return
	}
	cm := corev1ac.ConfigMap("", "").WithData(map[string]string{"mode": "fast"})
	cm.ObjectMetaApplyConfiguration = meta
	out, _ := json.Marshal(cm)
	fmt.Println(string(out))
	// Output:
	// {"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"settings","namespace":"shop","labels":{"tier":"web"}},"data":{"mode":"fast"}}
}

// ApplyTo keeps what the object already has.
func ExampleBuilder_ApplyTo() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:       "settings",
		Labels:     map[string]string{"team": "a", "tier": "db"},
		Finalizers: []string{"other.example.com/keep"},
	}}
	err := kopmeta.New("settings").Namespace("shop").
		Labels(map[string]string{"tier": "web"}).
		Finalizer("example.com/cleanup").
		ApplyTo(cm)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cm.Namespace, cm.Labels, cm.Finalizers)

	err = kopmeta.New("other").ApplyTo(cm)
	fmt.Println(err)
	// Output:
	// shop map[team:a tier:web] [other.example.com/keep example.com/cleanup]
	// invalid metadata: metadata.name: Invalid value: "other": the object is already named "settings"
}

// Clone branches a shared base; the branches do not affect each other.
func ExampleBuilder_Clone() {
	base := kopmeta.GenerateName("job-").Namespace("batch").Labels(map[string]string{"team": "data"})
	a, _ := base.Clone().Labels(map[string]string{"shard": "a"}).Build()
	b, _ := base.Clone().Labels(map[string]string{"shard": "b"}).Build()
	fmt.Println(a.GenerateName, a.Labels)
	fmt.Println(b.GenerateName, b.Labels)
	// Output:
	// job- map[shard:a team:data]
	// job- map[shard:b team:data]
}

// IsBeingDeleted tells an object whose deletion waits for its finalizers.
func ExampleIsBeingDeleted() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}
	fmt.Println(kopmeta.IsBeingDeleted(cm))
	cm.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	fmt.Println(kopmeta.IsBeingDeleted(cm))
	fmt.Println(kopmeta.IsBeingDeleted((*corev1.ConfigMap)(nil)))
	// Output:
	// false
	// true
	// false
}

// Every problem is reported at once, each with its field path and value.
func ExampleValidationError() {
	_, err := kopmeta.New("web").
		Labels(map[string]string{"app.kubernetes.io/name": "-web"}).
		Labels(map[string]string{"bad key": "v"}).
		Finalizer("cleanup").
		Build()

	if verr, ok := errors.AsType[*kopmeta.ValidationError](err); ok {
		for _, f := range verr.Fields {
			fmt.Printf("%s %q\n", f.Field, f.BadValue)
		}
	}

	_, err = kopmeta.New("web").Finalizer("cleanup").Build()
	fmt.Println(err)
	// Output:
	// metadata.labels["app.kubernetes.io/name"] "-web"
	// metadata.labels["bad key"] "bad key"
	// metadata.finalizers[0] "cleanup"
	// invalid metadata: metadata.finalizers[0]: Invalid value: "cleanup": must be domain-qualified, like "example.com/cleanup", so that no other controller's finalizer has the same name
}
