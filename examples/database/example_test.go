package database_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/examples/database"
	"github.com/kopgo/kopgo/examples/database/api/v1alpha1"
	"github.com/kopgo/kopgo/reconciler"
)

// Sync is a plain function of a Database and its observed children, so it
// runs without a cluster: here a new Database, with no children yet.
// reconciler.ChildOf reads back each desired child and its options: the
// Secret is created once, the StatefulSet waits for it, and the migration
// Job runs once for version 17.2, after the StatefulSet.
func ExampleSync() {
	db := &v1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders"},
		Spec:       v1alpha1.DatabaseSpec{Version: "17.2", Replicas: new(int32(2))},
	}
	desired, _, err := database.Sync(context.Background(), db, nil)
	if err != nil {
		panic(err)
	}
	for _, child := range desired {
		obj, opts := reconciler.ChildOf(child)
		line := []string{kind(obj), obj.GetName() + ":", opts.Update.String(), opts.RunKey}
		for _, d := range opts.DependsOn {
			line = append(line, "after", kind(d), d.GetName())
		}
		fmt.Println(strings.Join(slices.DeleteFunc(line, func(s string) bool { return s == "" }), " "))
	}
	fmt.Println(db.Status.Endpoint)
	// Output:
	// Secret orders-credentials: CreateOnce
	// Service orders: InPlace
	// StatefulSet orders: InPlace after Secret orders-credentials
	// Job orders-migrate: RunOnce 17.2 after StatefulSet orders
	// orders-0.orders.shop.svc:5432
}

// Once the migration Job of the Database's version has completed, Sync
// records the version in status.migratedVersion, and the desired Secret
// carries the password already stored: generated once, it is never
// replaced.
func ExampleSync_observed() {
	db := &v1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders"},
		Spec:       v1alpha1.DatabaseSpec{Version: "17.2"},
	}
	stored := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders-credentials"},
		Data:       map[string][]byte{database.PasswordKey: []byte("generated-at-creation")},
	}
	migrated := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders-migrate",
			Annotations: map[string]string{reconciler.RunOnceAnnotation: "17.2"}},
		Status: batchv1.JobStatus{Succeeded: 1, Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue},
		}},
	}
	desired, _, err := database.Sync(context.Background(), db, reconciler.Children{stored, migrated})
	if err != nil {
		panic(err)
	}
	secret, _ := reconciler.ChildOf(desired[0])
	fmt.Println(string(secret.(*corev1.Secret).Data[database.PasswordKey]))
	fmt.Println(db.Status.MigratedVersion)
	// Output:
	// generated-at-creation
	// 17.2
}

// The operator's main: kopgo's controller Builder runs the Reconciler
// (the Syncer and its Cleanup) with health and metrics ports, leader
// election, graceful shutdown and a reconcile timeout. Run blocks until
// the signal, then drains and releases the lease.
func ExampleNew() {
	err := database.New(database.Options{LeaderElection: true}).Run(ctrl.SetupSignalHandler())
	if err != nil {
		panic(err)
	}
}

// kind is the Go type name of a typed object: its kind.
func kind(obj client.Object) string { return reflect.TypeOf(obj).Elem().Name() }
