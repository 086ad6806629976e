package apply_test

import (
	"context"
	"fmt"

	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kopgo/kopgo/apply"
)

func ExampleApplier_Apply() {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Println("no cluster:", err)
		return
	}
	a, err := apply.New(cfg, "example-controller")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := a.Apply(context.Background(),
		corev1ac.ConfigMap("settings", "default").WithData(map[string]string{"color": "blue"}))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Outcome) // Created the first time, Unchanged after
}

func ExampleOutcome() {
	for _, o := range []apply.Outcome{apply.Created, apply.Updated, apply.Unchanged} {
		fmt.Println(o)
	}
	// Output:
	// Created
	// Updated
	// Unchanged
}
