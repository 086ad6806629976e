package owners_test

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopgo/kopgo/owners"
)

func ExampleSetController() {
	web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "42"}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-config"}}
	if err := owners.SetController(web, cm, scheme); err != nil {
		fmt.Println(err)
	}
	fmt.Println(metav1.GetControllerOf(cm).Kind, metav1.GetControllerOf(cm).Name)

	elsewhere := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "x"}}
	fmt.Println(owners.SetController(web, elsewhere, scheme))
	// Output:
	// Deployment web
	// set controller ConfigMap other/x: owner Deployment shop/web is in namespace "shop" and cannot own an object in "other": owner references do not cross namespaces
}
