package echoserver

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/examples/echoserver/api/v1alpha1"
	kopmeta "github.com/kopgo/kopgo/meta"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/status"
)

// The permissions the operator needs, generated into config/rbac/role.yaml;
// the test fails on a missing one and on an unused one. No "delete": Sync
// deletes only children the sync function stops returning, and an
// EchoServer always returns the same two (an operator whose set of children
// changes needs it).
// echoservers/finalizers: a controller reference blocks its owner's
// deletion, which the API server only allows to who may update the owner's
// finalizers. get on the children: before creating one, Sync reads its name
// live (it could list by name instead, several times slower under load).
//
// +kubebuilder:rbac:groups=echoserver.examples.kopgo.dev,resources=echoservers,verbs=list;watch
// +kubebuilder:rbac:groups=echoserver.examples.kopgo.dev,resources=echoservers/status,verbs=patch
// +kubebuilder:rbac:groups=echoserver.examples.kopgo.dev,resources=echoservers/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

const (
	// Image is the echo server's container image: it answers every request
	// with the text of its -text flag, on the address of its -listen flag.
	Image = "hashicorp/http-echo:1.0"
	// DefaultPort is the port used when spec.port is unset (the CRD
	// defaults it too).
	DefaultPort int32 = 5678
)

// ChildKinds are the kinds Sync returns: declare them to reconciler.Sync and
// watch them with the controller Builder's Owns.
func ChildKinds() []client.Object {
	return []client.Object{&appsv1.Deployment{}, &corev1.Service{}}
}

// Sync is the EchoServer's sync function: the Deployment and the Service
// an EchoServer wants, both named after it, and its status from the
// observed Deployment (readyReplicas; Ready once the rollout of what it
// asks for is complete, Reconciling with the progress until then).
//
// An EchoServer that cannot have valid children (a name that is no Service
// name, such as one with a dot) is a terminal error of Kind Invalid naming
// the field: the framework marks it Stalled and does not retry it until it
// changes, and nothing is applied.
func Sync(_ context.Context, es *v1alpha1.EchoServer, observed reconciler.Children) ([]client.Object, reconciler.Action, error) {
	if errs := validate(es); len(errs) > 0 {
		return nil, reconciler.Done(), koperrors.Terminal(koperrors.WrapKind(koperrors.Invalid, errs.ToAggregate(), "validate", kopmeta.RefOf(es)))
	}
	dep, svc := deployment(es), service(es)
	setStatus(es, dep, observed)
	return []client.Object{dep, svc}, reconciler.Done(), nil
}

// labels are the labels of the pods of es, and the Service's selector.
func labels(es *v1alpha1.EchoServer) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "echoserver", "app.kubernetes.io/instance": es.Name}
}

func port(es *v1alpha1.EchoServer) int32 {
	if es.Spec.Port == 0 {
		return DefaultPort
	}
	return es.Spec.Port
}

// deployment is the desired Deployment. It is a typed object: every field
// set here is owned by the operator; Replicas stays unowned when
// spec.replicas is unset (nil), so an autoscaler may set it.
func deployment(es *v1alpha1.EchoServer) *appsv1.Deployment {
	p := port(es)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: es.Name, Labels: labels(es)},
		Spec: appsv1.DeploymentSpec{
			Replicas: es.Spec.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels(es)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels(es)},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "echo",
					Image: Image,
					Args:  []string{"-text=" + es.Spec.Message, fmt.Sprintf("-listen=:%d", p)},
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: p}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
						HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromString("http")},
					}},
					SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: new(false),
						ReadOnlyRootFilesystem:   new(true),
					},
				}}},
			},
		},
	}
}

// service is the desired Service, in front of the pods.
func service(es *v1alpha1.EchoServer) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: es.Name, Labels: labels(es)},
		Spec: corev1.ServiceSpec{
			Selector: labels(es),
			Ports:    []corev1.ServicePort{{Name: "http", Port: port(es), TargetPort: intstr.FromString("http")}},
		},
	}
}

// setStatus reports the rollout of desired from the observed Deployment,
// as status.ReadinessOf reads it. Reconciling conditions it sets stand;
// otherwise the framework's Ready=True follows the success.
func setStatus(es *v1alpha1.EchoServer, desired *appsv1.Deployment, observed reconciler.Children) {
	dep, ok := observed.Get(&appsv1.Deployment{}, es.Name).(*appsv1.Deployment)
	if !ok {
		es.Status.ReadyReplicas = 0
		status.MarkReconciling(es, "Creating", "creating Deployment "+es.Name)
		return
	}
	es.Status.ReadyReplicas = dep.Status.ReadyReplicas
	if !upToDate(dep, desired) {
		status.MarkReconciling(es, "Updating", "updating Deployment "+es.Name)
		return
	}
	switch r := status.ReadinessOf(dep); r.State {
	case status.StateCurrent:
		status.MarkReady(es, "Available", r.Message)
	case status.StateFailed:
		status.MarkNotReady(es, r.Reason, r.Message)
	default:
		status.MarkReconciling(es, "Progressing", r.Message)
	}
}

// upToDate reports whether the observed Deployment already asks for what
// desired asks for (the fields the spec controls), so that its status says
// something about this spec rather than the previous one.
func upToDate(observed, desired *appsv1.Deployment) bool {
	if desired.Spec.Replicas != nil && (observed.Spec.Replicas == nil || *observed.Spec.Replicas != *desired.Spec.Replicas) {
		return false
	}
	oc, dc := observed.Spec.Template.Spec.Containers, desired.Spec.Template.Spec.Containers
	return len(oc) == len(dc) && len(oc) > 0 && slices.Equal(oc[0].Args, dc[0].Args) && oc[0].Image == dc[0].Image
}
