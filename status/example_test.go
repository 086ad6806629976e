package status_test

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/widget"
)

func ExampleSet() {
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: 2}}
	status.Set(w, metav1.Condition{Type: "Available", Status: metav1.ConditionTrue, Reason: "MinimumReplicas", Message: "3/3"})
	status.Set(w, metav1.Condition{Type: status.Ready, Status: metav1.ConditionFalse, Reason: "Waiting", Message: "1/3"})
	ltt := status.Get(w, status.Ready).LastTransitionTime

	// Only the message changes: the transition time stays.
	changed := status.Set(w, metav1.Condition{Type: status.Ready, Status: metav1.ConditionFalse, Reason: "Waiting", Message: "2/3"})
	fmt.Println("changed:", changed, "transition time kept:", status.Get(w, status.Ready).LastTransitionTime.Equal(&ltt))
	// The same again: no change.
	fmt.Println("changed:", status.Set(w, metav1.Condition{Type: status.Ready, Status: metav1.ConditionFalse, Reason: "Waiting", Message: "2/3"}))

	for _, c := range w.Status.Conditions {
		fmt.Println(c.Type, c.Status, c.Reason, c.Message, c.ObservedGeneration)
	}
	// Output:
	// changed: true transition time kept: true
	// changed: false
	// Ready False Waiting 2/3 2
	// Available True MinimumReplicas 3/3 2
}

func ExampleSetError() {
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: 4}}
	err := koperrors.Terminal(koperrors.Errorf(koperrors.Invalid, "spec.size -1: must be positive"))
	status.SetError(w, err)
	for _, c := range w.Status.Conditions {
		fmt.Println(c.Type, c.Status, c.Reason, c.Message, c.ObservedGeneration)
	}
	fmt.Println("current:", status.IsCurrent(w))
	// Output:
	// Ready False Invalid spec.size -1: must be positive 4
	// Stalled True Invalid spec.size -1: must be positive 4
	// current: true
}

func ExampleMarkReady() {
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: 1}}
	status.MarkReconciling(w, "Progressing", "1/3 replicas ready")
	fmt.Println(len(w.Status.Conditions), status.IsTrue(w, status.Ready))
	status.MarkReady(w, "Deployed", "3/3 replicas ready")
	fmt.Println(len(w.Status.Conditions), status.IsTrue(w, status.Ready))
	// Output:
	// 2 false
	// 1 true
}

func ExampleIsCurrent() {
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: 1}}
	status.SetError(w, nil) // generation 1 handled
	fmt.Println(status.IsCurrent(w))
	w.Generation = 2 // someone edited the spec
	fmt.Println(status.IsCurrent(w))
	status.SetError(w, koperrors.Errorf(koperrors.Unavailable, "registry down")) // will be retried
	fmt.Println(status.IsCurrent(w))
	// Output:
	// true
	// false
	// false
}

// WidgetReconciler is a plain controller-runtime reconciler.
type WidgetReconciler struct {
	client.Client
}

func (r *WidgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var w widget.Widget
	if err := r.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	p := status.NewPatcher(&w) // right after the read
	err := r.scale(ctx, &w)
	status.SetError(&w, err)
	// One apply of the whole status, or no request if nothing changed.
	if _, perr := p.Patch(ctx, r.Client, &w, client.FieldOwner("widget-controller")); perr != nil {
		return ctrl.Result{}, errors.Join(err, perr)
	}
	return ctrl.Result{}, err
}

func (r *WidgetReconciler) scale(_ context.Context, w *widget.Widget) error {
	w.Status.Phase = fmt.Sprintf("Scaled to %d", w.Spec.Size)
	return nil
}

// A plain controller-runtime reconciler: NewPatcher after the read,
// SetError with the outcome, Patch at the end.
func ExamplePatcher() {
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{})
	if err != nil {
		panic(err)
	}
	err = ctrl.NewControllerManagedBy(mgr).For(&widget.Widget{}).Complete(&WidgetReconciler{Client: mgr.GetClient()})
	if err != nil {
		panic(err)
	}
}

func ExampleReadinessOf() {
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 2},
		Spec:       appsv1.DeploymentSpec{Replicas: new(int32(3))},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 4, UpdatedReplicas: 1, AvailableReplicas: 3},
	}
	r := status.ReadinessOf(dep)
	fmt.Println(r.State, r.Reason, r.Message, r.State == status.StateCurrent)

	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3}
	r = status.ReadinessOf(dep)
	fmt.Println(r.State, r.Reason, r.Message, r.State == status.StateCurrent)

	// A custom resource: its kstatus conditions.
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: 1}}
	status.MarkStalled(w, "Invalid", "spec.size -1: must be positive")
	r = status.ReadinessOf(w)
	fmt.Println(r.State, r.Reason, r.Message)
	// Output:
	// InProgress RollingOut Deployment web: 1 of 3 replicas updated false
	// Current Available Deployment web: 3 of 3 replicas available true
	// Failed Stalled Widget w is stalled: Invalid: spec.size -1: must be positive
}

// A type from another module (here k8s.io/api's PodDisruptionBudget, whose
// status has conditions and observedGeneration but none of the methods
// this package asks for) gets the same handling through an accessor.
func ExampleAccess() {
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: 3}}
	s := status.Access(pdb, &pdb.Status.Conditions).WithObservedGeneration(&pdb.Status.ObservedGeneration)

	status.MarkReconciling(s, "Waiting", "1 of 3 pods healthy")
	fmt.Println(status.IsTrue(s, status.Ready), status.IsCurrent(s))

	status.SetError(s, nil) // the next reconcile succeeds
	for _, c := range pdb.Status.Conditions {
		fmt.Println(c.Type, c.Status, c.Reason, c.ObservedGeneration)
	}
	fmt.Println("observedGeneration:", pdb.Status.ObservedGeneration, "current:", status.IsCurrent(s))
	// Output:
	// false false
	// Ready True Succeeded 3
	// observedGeneration: 3 current: true
}

// Conditions kept in another shape than []metav1.Condition are read and
// written through two functions; here a map by type.
func ExampleAccessFuncs() {
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: 1}}
	byType := map[string]metav1.Condition{}
	s := status.AccessFuncs(w,
		func() []metav1.Condition {
			var out []metav1.Condition
			for _, t := range []string{status.Ready, status.Reconciling, status.Stalled} {
				if c, ok := byType[t]; ok {
					out = append(out, c)
				}
			}
			return out
		},
		func(conds []metav1.Condition) {
			clear(byType)
			for _, c := range conds {
				byType[c.Type] = c
			}
		})
	status.SetError(s, koperrors.Terminal(errors.New("spec.size -1: must be positive")))
	fmt.Println(byType[status.Stalled].Status, byType[status.Ready].Status, byType[status.Ready].Message)
	// Output:
	// True False spec.size -1: must be positive
}
