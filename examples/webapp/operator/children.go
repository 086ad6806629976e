package operator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	webappv1 "github.com/kopgo/kopgo/examples/webapp/api/v1alpha1"
	"github.com/kopgo/kopgo/owners"
)

// Labels and annotations the operator writes.
const (
	// SecretLabel marks a Secret to be mounted into a WebApp's pods: its
	// value is the WebApp's name (same namespace). A change to such a
	// Secret rolls the pods.
	SecretLabel = "webapp.examples.kopgo.dev/app"
	// ConfigHashAnnotation on the pod template carries a hash of the
	// WebApp's config and mounted Secrets, so that a change rolls the pods.
	ConfigHashAnnotation = "webapp.examples.kopgo.dev/config-hash"
	// InstanceLabel is the standard label naming the WebApp, on every child
	// and pod.
	InstanceLabel = "app.kubernetes.io/instance"
)

// Child names.
func configMapName(app *webappv1.WebApp) string { return app.Name + "-config" }

func port(app *webappv1.WebApp) int32 {
	if app.Spec.Port == 0 {
		return 8080
	}
	return app.Spec.Port
}

func replicas(app *webappv1.WebApp) int32 {
	if app.Spec.Replicas == nil {
		return 1
	}
	return *app.Spec.Replicas
}

func labels(app *webappv1.WebApp) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "webapp",
		InstanceLabel:                  app.Name,
		"app.kubernetes.io/managed-by": "kopgo-webapp",
	}
}

func configMap(app *webappv1.WebApp, scheme *runtime.Scheme) (*corev1ac.ConfigMapApplyConfiguration, error) {
	cm := corev1ac.ConfigMap(configMapName(app), app.Namespace).WithLabels(labels(app)).WithData(app.Spec.Config)
	ref, err := owners.ControllerApplyConfiguration(app, cm, scheme)
	if err != nil {
		return nil, err
	}
	return cm.WithOwnerReferences(ref), nil
}

func service(app *webappv1.WebApp, scheme *runtime.Scheme) (*corev1ac.ServiceApplyConfiguration, error) {
	svc := corev1ac.Service(app.Name, app.Namespace).WithLabels(labels(app)).
		WithSpec(corev1ac.ServiceSpec().
			WithSelector(map[string]string{InstanceLabel: app.Name}).
			WithPorts(corev1ac.ServicePort().WithName("http").WithPort(port(app)).
				WithTargetPort(intstr.FromString("http")).WithProtocol(corev1.ProtocolTCP)))
	ref, err := owners.ControllerApplyConfiguration(app, svc, scheme)
	if err != nil {
		return nil, err
	}
	return svc.WithOwnerReferences(ref), nil
}

func deployment(app *webappv1.WebApp, secrets []metav1.PartialObjectMetadata, scheme *runtime.Scheme) (*appsv1ac.DeploymentApplyConfiguration, error) {
	env := []*corev1ac.EnvFromSourceApplyConfiguration{
		corev1ac.EnvFromSource().WithConfigMapRef(corev1ac.ConfigMapEnvSource().WithName(configMapName(app))),
	}
	for _, s := range secrets {
		env = append(env, corev1ac.EnvFromSource().WithSecretRef(corev1ac.SecretEnvSource().WithName(s.Name)))
	}
	container := corev1ac.Container().WithName("web").WithImage(app.Spec.Image).
		WithPorts(corev1ac.ContainerPort().WithName("http").WithContainerPort(port(app)).WithProtocol(corev1.ProtocolTCP)).
		WithEnvFrom(env...).
		WithReadinessProbe(corev1ac.Probe().WithTCPSocket(corev1ac.TCPSocketAction().WithPort(intstr.FromString("http"))))
	dep := appsv1ac.Deployment(app.Name, app.Namespace).WithLabels(labels(app)).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(replicas(app)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{InstanceLabel: app.Name})).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(labels(app)).
				WithAnnotations(map[string]string{ConfigHashAnnotation: configHash(app, secrets)}).
				WithSpec(corev1ac.PodSpec().WithContainers(container))))
	ref, err := owners.ControllerApplyConfiguration(app, dep, scheme)
	if err != nil {
		return nil, err
	}
	return dep.WithOwnerReferences(ref), nil
}

// configHash hashes what the pods read at start: the config, and the mounted
// Secrets by name and resourceVersion (every write to a Secret moves its
// resourceVersion; the operator never reads Secret data).
func configHash(app *webappv1.WebApp, secrets []metav1.PartialObjectMetadata) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(app.Spec.Config)) {
		_, _ = fmt.Fprintf(h, "config/%s=%q\n", k, app.Spec.Config[k])
	}
	for _, s := range secrets {
		_, _ = fmt.Fprintf(h, "secret/%s@%s\n", s.Name, s.ResourceVersion)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
