package echoserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/examples/echoserver"
	"github.com/kopgo/kopgo/examples/echoserver/api/v1alpha1"
	"github.com/kopgo/kopgo/reconciler"
)

// FuzzSync feeds the sync function EchoServers of any name, message,
// replicas and port, with or without an observed Deployment in any state of
// its rollout. It never panics; an error is terminal and names a field of
// the EchoServer; otherwise every child it returns passes the API server's
// checks of names, labels, selectors and ports, its apply request is YAML
// the API server reads, and the conditions it sets are valid.
//
//	go test ./examples/echoserver -run '^$' -fuzz FuzzSync -fuzztime 60s
func FuzzSync(f *testing.F) {
	f.Add("hello", "default", "hello, world", int32(2), true, int32(8080), true, false, int64(2), int64(2), int32(2), int32(2), int32(2), int32(2), false)
	f.Add("a.b", "ns", "x", int32(0), false, int32(0), false, false, int64(0), int64(0), int32(0), int32(0), int32(0), int32(0), false)
	f.Add(strings.Repeat("a", 63), strings.Repeat("n", 63), strings.Repeat("€", 1024), int32(100), true, int32(65535), true, true, int64(3), int64(2), int32(5), int32(1), int32(0), int32(-1), true)
	f.Add(strings.Repeat("a", 64), "ns", "m", int32(1), true, int32(1), false, false, int64(1), int64(1), int32(0), int32(0), int32(0), int32(0), false)
	f.Add("1abc", "ns", "", int32(-1), true, int32(-5), false, false, int64(1), int64(1), int32(0), int32(0), int32(0), int32(0), false)
	f.Add("e", "ns", "a\u0085b", int32(1), true, int32(80), false, false, int64(1), int64(1), int32(0), int32(0), int32(0), int32(0), false)
	f.Add("e", "ns", "a\x7fb\u0080\u0085\ufffe", int32(1), true, int32(80), false, false, int64(1), int64(1), int32(0), int32(0), int32(0), int32(0), false)
	f.Add("e", "ns", "\x00\n\"'`$(rm -rf /)", int32(1), true, int32(70000), true, false, int64(1), int64(9), int32(-3), int32(7), int32(8), int32(9), false)
	f.Fuzz(func(t *testing.T, name, namespace, message string, replicas int32, hasReplicas bool, port int32,
		observe, stale bool, generation, observedGeneration int64, total, updated, ready, available int32, deadline bool,
	) {
		es := &v1alpha1.EchoServer{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-1"), Generation: 1},
			Spec:       v1alpha1.EchoServerSpec{Message: message, Port: port},
		}
		if hasReplicas {
			es.Spec.Replicas = &replicas
		}
		ctx := context.Background()
		observed := reconciler.Children{}
		if observe {
			// The Deployment as the server holds it: what Sync wants (or,
			// stale, an older message) with the fuzzed rollout status.
			if desired, _, err := echoserver.Sync(ctx, es.DeepCopy(), reconciler.Children{}); err == nil {
				dep := desired[0].(*appsv1.Deployment).DeepCopy()
				dep.Namespace, dep.Generation = namespace, generation
				if stale {
					dep.Spec.Template.Spec.Containers[0].Args[0] = "-text=old"
				}
				dep.Status = appsv1.DeploymentStatus{
					ObservedGeneration: observedGeneration, Replicas: total, UpdatedReplicas: updated,
					ReadyReplicas: ready, AvailableReplicas: available,
				}
				if deadline {
					dep.Status.Conditions = []appsv1.DeploymentCondition{{
						Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
					}}
				}
				observed = reconciler.Children{dep}
			}
		}

		children, _, err := echoserver.Sync(ctx, es, observed)
		if err != nil {
			if !koperrors.IsTerminal(err) {
				t.Errorf("Sync: %v: not terminal, so retried forever", err)
			}
			if !namesEchoServerField(err.Error()) {
				t.Errorf("Sync: %v: names no field of the EchoServer", err)
			}
			return
		}
		// The API server holds only EchoServers with valid object names in
		// valid namespaces: only those must get valid children.
		if len(validation.IsDNS1123Subdomain(name)) > 0 || len(validation.IsDNS1123Label(namespace)) > 0 {
			return
		}
		// The API server reads apply requests as YAML.
		for _, c := range children {
			body, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			var fromYAML, fromJSON map[string]any
			if err := utilyaml.NewYAMLToJSONDecoder(bytes.NewReader(body)).Decode(&fromYAML); err != nil {
				t.Errorf("EchoServer %s/%s %+v: %T: apply request the API server cannot read: %v", namespace, name, es.Spec, c, err)
			} else if err := json.Unmarshal(body, &fromJSON); err != nil {
				t.Fatal(err)
			} else if diff := cmp.Diff(fromJSON, fromYAML); diff != "" {
				t.Errorf("EchoServer %s/%s %+v: %T: apply request the API server reads as something else (-sent +read):\n%s", namespace, name, es.Spec, c, diff)
			}
		}
		if errs := checkChildren(children); len(errs) > 0 {
			t.Errorf("EchoServer %s/%s %+v: children the API server would refuse:\n%v", namespace, name, es.Spec, errs.ToAggregate())
		}
		if errs := metav1validation.ValidateConditions(es.Status.Conditions, field.NewPath("status", "conditions")); len(errs) > 0 {
			t.Errorf("EchoServer %s/%s: invalid conditions %+v:\n%v", namespace, name, es.Status.Conditions, errs.ToAggregate())
		}
	})
}

// namesEchoServerField reports whether an error message names one of the
// fields of an EchoServer.
func namesEchoServerField(msg string) bool {
	for _, f := range []string{"metadata.name", "spec.message", "spec.replicas", "spec.port"} {
		if strings.Contains(msg, f+":") {
			return true
		}
	}
	return false
}

// checkChildren returns what the API server would refuse in Sync's
// children, as far as apimachinery's validation tells: names, labels,
// selectors, replicas and ports.
func checkChildren(children []client.Object) field.ErrorList {
	var errs field.ErrorList
	if len(children) != 2 {
		return field.ErrorList{field.Invalid(field.NewPath("children"), len(children), "want a Deployment and a Service")}
	}
	for _, c := range children {
		switch c := c.(type) {
		case *appsv1.Deployment:
			p := field.NewPath("Deployment")
			for _, msg := range validation.IsDNS1123Subdomain(c.Name) {
				errs = append(errs, field.Invalid(p.Child("metadata", "name"), c.Name, msg))
			}
			errs = append(errs, metav1validation.ValidateLabels(c.Labels, p.Child("metadata", "labels"))...)
			errs = append(errs, metav1validation.ValidateLabelSelector(c.Spec.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("spec", "selector"))...)
			errs = append(errs, metav1validation.ValidateLabels(c.Spec.Template.Labels, p.Child("spec", "template", "labels"))...)
			for k, v := range c.Spec.Selector.MatchLabels {
				if c.Spec.Template.Labels[k] != v {
					errs = append(errs, field.Invalid(p.Child("spec", "selector"), k, "not among the template's labels"))
				}
			}
			if r := c.Spec.Replicas; r != nil && *r < 0 {
				errs = append(errs, field.Invalid(p.Child("spec", "replicas"), *r, "negative"))
			}
			for _, ctr := range c.Spec.Template.Spec.Containers {
				for _, port := range ctr.Ports {
					for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
						errs = append(errs, field.Invalid(p.Child("spec", "template", "spec", "containers", "ports"), port.ContainerPort, msg))
					}
					for _, msg := range validation.IsValidPortName(port.Name) {
						errs = append(errs, field.Invalid(p.Child("spec", "template", "spec", "containers", "ports"), port.Name, msg))
					}
				}
			}
		case *corev1.Service:
			p := field.NewPath("Service")
			for _, msg := range validation.IsDNS1035Label(c.Name) {
				errs = append(errs, field.Invalid(p.Child("metadata", "name"), c.Name, msg))
			}
			errs = append(errs, metav1validation.ValidateLabels(c.Labels, p.Child("metadata", "labels"))...)
			errs = append(errs, metav1validation.ValidateLabels(c.Spec.Selector, p.Child("spec", "selector"))...)
			for _, port := range c.Spec.Ports {
				for _, msg := range validation.IsValidPortNum(int(port.Port)) {
					errs = append(errs, field.Invalid(p.Child("spec", "ports"), port.Port, msg))
				}
			}
		default:
			errs = append(errs, field.Invalid(field.NewPath("children"), c, "unexpected kind"))
		}
	}
	return errs
}
