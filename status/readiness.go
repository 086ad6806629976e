package status

import (
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReadinessState is the state of an object as kstatus sees it.
type ReadinessState string

// The states of [ReadinessOf], kstatus' vocabulary (less its Unknown and
// NotFound, which describe a lookup rather than an object).
const (
	// StateCurrent: the object's desired state is reached (it is ready).
	StateCurrent ReadinessState = "Current"
	// StateInProgress: the object is still converging (rolling out,
	// pending, its controller has not seen its latest spec yet).
	StateInProgress ReadinessState = "InProgress"
	// StateFailed: the object will not converge without a change (a
	// Deployment's progress deadline exceeded, a failed Job, Stalled=True).
	StateFailed ReadinessState = "Failed"
	// StateTerminating: the object is being deleted
	// (metadata.deletionTimestamp is set).
	StateTerminating ReadinessState = "Terminating"
)

// Readiness is an object's readiness: its state, and a reason and a
// message a person can read ("Deployment web: 1 of 3 replicas updated").
type Readiness struct {
	// State is the object's state.
	State ReadinessState
	// Reason is CamelCase and usable as a condition's reason; see
	// [ReadinessOf] for the set.
	Reason string
	// Message names the object's kind and name, and the numbers behind
	// the state.
	Message string
}

// ReadinessOf computes the readiness of obj, a typed object (such as
// *appsv1.Deployment, read from a cache with an empty TypeMeta) or an
// *unstructured.Unstructured, by kstatus' rules
// (sigs.k8s.io/cli-utils/pkg/kstatus) and those of `kubectl rollout
// status`. Both forms of the same object get the same result. Where it
// departs from kstatus, on purpose, the package documentation's table
// says so and why.
//
// In order:
//
//   - metadata.deletionTimestamp set: Terminating ("Terminating").
//   - status.observedGeneration older than metadata.generation: the
//     object's controller has not seen its latest spec, InProgress
//     ("GenerationNotObserved").
//   - kstatus' abnormal-true conditions, on every kind, built-in or not:
//     Stalled=True is Failed ("Stalled"), Reconciling=True is InProgress
//     ("Reconciling"); Stalled wins when both are True.
//   - Deployment: Progressing=False with reason ProgressDeadlineExceeded is
//     Failed ("ProgressDeadlineExceeded"); until updatedReplicas,
//     replicas and availableReplicas all equal spec.replicas (1 when
//     unset), InProgress ("RollingOut" while pods of an older template
//     remain or pods of the current one are missing, "Scaling" while extra
//     pods go away, "Unavailable" while new pods are not yet available,
//     "Paused" instead of any of these when spec.paused is set); then
//     Current ("Available").
//   - StatefulSet: InProgress ("Scaling", "Unavailable") until replicas and
//     availableReplicas equal spec.replicas; with a RollingUpdate, until
//     the pods at or above the partition are updated and, without a
//     partition, currentRevision equals updateRevision ("RollingOut").
//     The OnDelete strategy waits for no update. Then Current
//     ("Available").
//   - DaemonSet: InProgress ("NoStatus") while its status lacks
//     desiredNumberScheduled (or, typed, is empty): its controller has not
//     written it; then InProgress ("Scaling", "RollingOut", "NotReady",
//     "Unavailable") until a pod runs, is updated (except with OnDelete),
//     is ready and is available on every node that should run one; then
//     Current ("Available").
//   - ReplicaSet: InProgress ("NoStatus") while its status lacks replicas
//     (typed: observedGeneration, replicas and conditions all unset); then
//     InProgress ("ReplicaFailure" when pods cannot be created, "Scaling",
//     "NotReady", "Unavailable") until replicas, readyReplicas and
//     availableReplicas equal spec.replicas; then Current ("Available").
//   - Job: Complete=True is Current ("Complete"), Failed=True or
//     FailureTarget=True is Failed ("JobFailed"); a suspended Job is
//     InProgress ("Suspended"), as is one the job controller has not
//     started ("NotStarted") and a running one ("Running").
//   - PersistentVolumeClaim: Current when Bound ("Bound"), Failed when
//     Lost ("ClaimLost"), otherwise InProgress ("Pending").
//   - Service: of type LoadBalancer, InProgress ("Pending") until
//     status.loadBalancer.ingress has an address or spec.externalIPs
//     names one; then, and for every other type, Current ("Current",
//     "Ready" for a load balancer).
//   - Pod: Succeeded is Current ("Succeeded"), Failed is Failed
//     ("PodFailed", with the failed container's exit code when the Pod
//     gives no reason), Ready=True is Current ("Ready"), a container
//     (init containers included) waiting in CrashLoopBackOff is Failed
//     ("CrashLoopBackOff"), anything else is InProgress ("Pending",
//     "NotReady").
//   - CustomResourceDefinition: Established=True is Current
//     ("Established"); NamesAccepted=False is Failed ("NamesNotAccepted"),
//     as is Established=False for any reason but Installing
//     ("NotEstablished"); otherwise InProgress ("Establishing"): custom
//     resources of a CRD that is not established cannot be created yet.
//   - Any other kind, by the kstatus conditions: Ready other than True,
//     or True but observed for an older generation, is InProgress
//     ("NotReady", "GenerationNotObserved"), Ready=True is Current
//     ("Ready"); no such condition is Current ("Current"), which is how
//     ConfigMaps, Secrets and every kind without a status read.
//
// A metadata-only object (*metav1.PartialObjectMetadata) has no status:
// it is InProgress ("StatusNotRead"), except for ConfigMaps, Secrets and
// ServiceAccounts; give ReadinessOf the full object. An object whose
// content does not decode into its kind's Go type is InProgress
// ("UnreadableStatus").
//
// Messages name the kind and the object, then what is awaited or what
// went wrong, and never end in an empty "reason: " when a condition has
// neither reason nor message. A name that is empty (an object built in
// memory, a claim bound to a volume it does not name) leaves no hole: the
// kind alone ("CustomResourceDefinition: established"), "bound to a
// volume".
func ReadinessOf(obj client.Object) Readiness {
	if ts := obj.GetDeletionTimestamp(); ts != nil {
		return Readiness{StateTerminating, "Terminating", subject(kindOf(obj), obj.GetName()) + " is being deleted"}
	}
	if b, ok := builtinsByType[reflect.TypeOf(obj)]; ok {
		if b.rules == nil {
			// No status at all: skip the conversion below.
			return current(b.gk.Kind, obj.GetName())
		}
		return b.rules(obj)
	}
	switch o := obj.(type) {
	case *metav1.PartialObjectMetadata:
		return metadataReadiness(o)
	case *unstructured.Unstructured:
		gk := o.GroupVersionKind().GroupKind()
		if typed := builtinFor(gk); typed != nil {
			if missingStatus(gk, o.Object) && o.GetDeletionTimestamp() == nil {
				if gen, ok := nestedInt64(o.Object, "status", "observedGeneration"); !ok || gen >= o.GetGeneration() {
					return noStatus(gk.Kind, o.GetName())
				}
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, typed); err != nil {
				return Readiness{StateInProgress, "UnreadableStatus", fmt.Sprintf("%s: %v", subject(o.GetKind(), o.GetName()), err)}
			}
			return ReadinessOf(typed)
		}
		if rules, ok := contentRules[gk]; ok {
			return rules(o.GetName(), o.Object)
		}
		return genericReadiness(kindOf(o), o.GetName(), o.GetGeneration(), o.Object)
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return Readiness{StateInProgress, "UnreadableStatus", fmt.Sprintf("%s: %v", subject(kindOf(obj), obj.GetName()), err)}
	}
	gk := groupKindOf(obj)
	if builtinFor(gk) != nil {
		// Another Go type for a built-in kind.
		return ReadinessOf(&unstructured.Unstructured{Object: content})
	}
	if rules, ok := contentRules[gk]; ok {
		return rules(obj.GetName(), content)
	}
	return genericReadiness(kindOf(obj), obj.GetName(), obj.GetGeneration(), content)
}

// contentRules are the rules of the kinds that [ReadinessOf] knows by
// group and kind only: their Go types live in modules this package does
// not import (status depends on apimachinery, client-go and
// controller-runtime alone), so their content is read as unstructured.
var contentRules = map[schema.GroupKind]func(name string, content map[string]any) Readiness{
	crdGroupKind: crdReadiness,
}

// foreignTypes names the Go types of the kinds in contentRules, so that
// a typed object read from a cache (its TypeMeta empty) is recognised.
var foreignTypes = map[string]schema.GroupKind{
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.CustomResourceDefinition":      crdGroupKind,
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1.CustomResourceDefinition": crdGroupKind,
}

// groupKindOf is obj's group and kind, from TypeMeta, else from its Go
// type when the package knows it.
func groupKindOf(obj client.Object) schema.GroupKind {
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
		return gvk.GroupKind()
	}
	t := reflect.TypeOf(obj)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return foreignTypes[t.PkgPath()+"."+t.Name()]
}

// metadataReadiness is the readiness of an object of which only metadata
// was read: Current for the kinds that have no status, else InProgress,
// which a reader notices, rather than a Current nobody checked.
func metadataReadiness(o *metav1.PartialObjectMetadata) Readiness {
	if b, ok := builtinsByKind[o.GroupVersionKind().GroupKind()]; ok && b.rules == nil {
		return current(kindOf(o), o.GetName())
	}
	return inProgress("StatusNotRead", kindOf(o), o.GetName(), "only its metadata was read, readiness needs its status")
}

// builtin is a built-in kind that [ReadinessOf] knows by its Go type.
type builtin struct {
	gk schema.GroupKind
	// newObject returns an empty object of the kind's Go type.
	newObject func() client.Object
	// rules computes an object's readiness; nil for the kinds without a
	// status, which are Current.
	rules func(client.Object) Readiness
}

// builtinKind describes the kind group/kind, of Go type T, judged by rules
// (nil for a kind without a status).
func builtinKind[T any, P interface {
	*T
	client.Object
}](group, kind string, rules func(P) Readiness) builtin {
	b := builtin{gk: schema.GroupKind{Group: group, Kind: kind}, newObject: func() client.Object { return P(new(T)) }}
	if rules != nil {
		b.rules = func(obj client.Object) Readiness { return rules(obj.(P)) }
	}
	return b
}

// builtinsByType and builtinsByKind index the built-in kinds that
// [ReadinessOf] knows: those with rules of their own, and those without a
// status.
var builtinsByType, builtinsByKind = indexBuiltins(
	builtinKind[appsv1.Deployment](appsv1.GroupName, "Deployment", deploymentReadiness),
	builtinKind[appsv1.StatefulSet](appsv1.GroupName, "StatefulSet", statefulSetReadiness),
	builtinKind[appsv1.DaemonSet](appsv1.GroupName, "DaemonSet", daemonSetReadiness),
	builtinKind[appsv1.ReplicaSet](appsv1.GroupName, "ReplicaSet", replicaSetReadiness),
	builtinKind[batchv1.Job](batchv1.GroupName, "Job", jobReadiness),
	builtinKind[corev1.PersistentVolumeClaim]("", "PersistentVolumeClaim", pvcReadiness),
	builtinKind[corev1.Service]("", "Service", serviceReadiness),
	builtinKind[corev1.Pod]("", "Pod", podReadiness),
	builtinKind[corev1.ConfigMap]("", "ConfigMap", nil),
	builtinKind[corev1.Secret]("", "Secret", nil),
	builtinKind[corev1.ServiceAccount]("", "ServiceAccount", nil),
)

func indexBuiltins(kinds ...builtin) (map[reflect.Type]builtin, map[schema.GroupKind]builtin) {
	byType := make(map[reflect.Type]builtin, len(kinds))
	byKind := make(map[schema.GroupKind]builtin, len(kinds))
	for _, b := range kinds {
		byType[reflect.TypeOf(b.newObject())] = b
		byKind[b.gk] = b
	}
	return byType, byKind
}

// builtinFor returns a new typed object for the kinds with their own
// rules, nil for the others.
func builtinFor(gk schema.GroupKind) client.Object {
	if b, ok := builtinsByKind[gk]; ok && b.rules != nil {
		return b.newObject()
	}
	return nil
}

// kindOf is obj's kind: from the Go type for the built-in kinds (a typed
// object from a cache has an empty TypeMeta), else from TypeMeta, else
// the Go type's name.
func kindOf(obj client.Object) string {
	if b, ok := builtinsByType[reflect.TypeOf(obj)]; ok {
		return b.gk.Kind
	}
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	t := reflect.TypeOf(obj)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

func current(kind, name string) Readiness {
	return Readiness{StateCurrent, "Current", subject(kind, name) + ": nothing to wait for"}
}

func inProgress(reason, kind, name, format string, args ...any) Readiness {
	return Readiness{StateInProgress, reason, subject(kind, name) + ": " + fmt.Sprintf(format, args...)}
}

// subject names an object in a message: "Deployment web", or the kind
// alone when the name is empty (an object built in memory, a fixture), so
// that no message has a hole ("Deployment : ...").
func subject(kind, name string) string {
	if name == "" {
		return kind
	}
	return kind + " " + name
}

// withName appends " name" to what, or nothing when name is empty ("bound
// to volume pv-1", "bound to a volume").
func withName(what, name, otherwise string) string {
	if name == "" {
		return otherwise
	}
	return what + " " + name
}

// staleGeneration is the readiness of an object whose controller has not
// observed generation gen yet.
func staleGeneration(kind, name string, gen, observed int64) Readiness {
	return inProgress("GenerationNotObserved", kind, name, "waiting for its controller to observe generation %d (observed %d)", gen, observed)
}

// genericReadiness applies the kstatus condition rules to the content of
// an object of a kind without rules of its own.
func genericReadiness(kind, name string, gen int64, content map[string]any) Readiness {
	if og, ok := nestedInt64(content, "status", "observedGeneration"); ok && og < gen {
		return staleGeneration(kind, name, gen, og)
	}
	conds := genericConditions(content)
	if r, ok := abnormal(kind, name, conds[Stalled], conds[Reconciling]); ok {
		return r
	}
	c, ok := conds[Ready]
	switch {
	case !ok:
		return current(kind, name)
	case c.ObservedGeneration != 0 && c.ObservedGeneration < gen:
		return inProgress("GenerationNotObserved", kind, name, "Ready observed for generation %d, not %d", c.ObservedGeneration, gen)
	case c.Status != metav1.ConditionTrue:
		return inProgress("NotReady", kind, name, "%s", detail("Ready="+string(c.Status), c.Reason, c.Message))
	}
	return Readiness{StateCurrent, "Ready", detail(subject(kind, name)+" is ready", c.Reason, c.Message)}
}

// abnormal applies kstatus' abnormal-true conditions, which kstatus reads
// on every kind before the kind's own rules: Stalled=True is Failed
// ("Stalled"), Reconciling=True is InProgress ("Reconciling"). Stalled
// wins when both are True (kstatus takes whichever comes first in the
// list). A zero condition is an absent one.
func abnormal(kind, name string, stalled, reconciling metav1.Condition) (Readiness, bool) {
	switch {
	case stalled.Status == metav1.ConditionTrue:
		return Readiness{StateFailed, "Stalled", detail(subject(kind, name)+" is stalled", stalled.Reason, stalled.Message)}, true
	case reconciling.Status == metav1.ConditionTrue:
		return Readiness{StateInProgress, "Reconciling", detail(subject(kind, name)+": reconciling", reconciling.Reason, reconciling.Message)}, true
	}
	return Readiness{}, false
}

// abnormalOf is [abnormal] for the conditions of a built-in kind, each
// seen through view as a metav1.Condition; the first of each type counts.
func abnormalOf[C any](kind, name string, conds []C, view func(C) metav1.Condition) (Readiness, bool) {
	var stalled, reconciling metav1.Condition
	for _, item := range conds {
		c := view(item)
		switch {
		case c.Type == Stalled && stalled.Type == "":
			stalled = c
		case c.Type == Reconciling && reconciling.Type == "":
			reconciling = c
		}
	}
	return abnormal(kind, name, stalled, reconciling)
}

// cond is a condition of a built-in kind as a metav1.Condition.
func cond[T, S ~string](t T, s S, reason, message string) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: metav1.ConditionStatus(s), Reason: reason, Message: message}
}

// genericConditions reads status.conditions by type, tolerating entries
// that are not shaped like metav1.Condition (a CRD may hold anything).
func genericConditions(content map[string]any) map[string]metav1.Condition {
	list, _, _ := unstructured.NestedSlice(content, "status", "conditions")
	out := make(map[string]metav1.Condition, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		var c metav1.Condition
		c.Type, _ = m["type"].(string)
		s, _ := m["status"].(string)
		c.Status = metav1.ConditionStatus(s)
		c.Reason, _ = m["reason"].(string)
		c.Message, _ = m["message"].(string)
		c.ObservedGeneration, _ = toInt64(m["observedGeneration"])
		if _, seen := out[c.Type]; !seen {
			out[c.Type] = c
		}
	}
	return out
}

// detail is prefix followed by ": " and a condition's reason and message,
// or prefix alone when both are empty (never a dangling colon).
func detail(prefix, reason, message string) string {
	if rm := reasonMessage(reason, message); rm != "" {
		return prefix + ": " + rm
	}
	return prefix
}

// reasonMessage joins a condition's reason and message.
func reasonMessage(reason, message string) string {
	switch {
	case reason == "":
		return message
	case message == "":
		return reason
	}
	return reason + ": " + message
}

func nestedInt64(content map[string]any, fields ...string) (int64, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(content, fields...)
	if !found || err != nil {
		return 0, false
	}
	return toInt64(v)
}

// toInt64 reads a number as JSON decoders leave it: int64 from the API
// machinery, float64 from encoding/json.
func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		return int64(n), true
	}
	return 0, false
}
