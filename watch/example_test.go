package watch_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/scope"
	"github.com/kopgo/kopgo/watch"
)

// Follow the ConfigMaps of one namespace until the context ends.
func ExampleEvents() {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Println("no cluster:", err)
		return
	}
	c, err := client.NewWithWatch(cfg, client.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	events, err := watch.Events[*corev1.ConfigMap](ctx, c, scope.Namespaced("shop"), client.MatchingLabels{"app": "web"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for ev := range events {
		fmt.Println(ev.Type, ev.Object.Name)
	}
}
