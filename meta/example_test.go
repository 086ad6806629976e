package meta_test

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kopmeta "github.com/kopgo/kopgo/meta"
)

func ExampleBuilder_Build() {
	owner := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "1234"}}
	om, err := kopmeta.New("web-config").
		Namespace("shop").
		Label("app.kubernetes.io/name", "web").
		Finalizer("example.com/cleanup").
		ControlledBy(owner, appsv1.SchemeGroupVersion.WithKind("Deployment")).
		Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	ref := om.OwnerReferences[0]
	fmt.Println(om.Namespace+"/"+om.Name, om.Labels, om.Finalizers)
	fmt.Println(ref.APIVersion, ref.Kind, ref.Name, *ref.Controller)
	// Output:
	// shop/web-config map[app.kubernetes.io/name:web] [example.com/cleanup]
	// apps/v1 Deployment web true
}

func ExampleValidationError() {
	_, err := kopmeta.New("Web").Label("app", "-bad").Finalizer("cleanup").Build()
	fmt.Println(err)
	// Output:
	// invalid metadata: metadata.finalizers[0]: Invalid value: "cleanup": must be domain-qualified, e.g. example.com/cleanup; metadata.labels: Invalid value: "-bad": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'); metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
}

func ExampleBuilder_ApplyTo() {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Labels: map[string]string{"team": "a"}}}
	if err := kopmeta.New("settings").Namespace("shop").Label("tier", "web").ApplyTo(cm); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cm.Namespace, cm.Labels)
	// Output:
	// shop map[team:a tier:web]
}
