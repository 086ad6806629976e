package controller_test

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/versioned"
)

// An operator that defaults, validates and converts its kind, reached by
// the API server through its Service: the CA lives in the Secret
// gadgets-webhook-ca in gadgets-system, and the webhook configurations
// and the CRD's spec.conversion get its caBundle.
func ExampleBuilder_Webhooks() {
	r := reconciler.Func[*versioned.Gadget](func(context.Context, *versioned.Gadget, *reconciler.Env) (reconciler.Action, error) {
		return reconciler.Done(), nil
	})
	if _, err := ctrl.GetConfig(); err != nil {
		fmt.Println("no cluster:", err)
		return
	}
	err := kopcontroller.New[*versioned.Gadget]("gadgets", r).
		Scheme(scheme).   // knows both versions of Gadget
		HealthPort(8081). // /readyz waits for the webhooks to serve
		Webhooks(kopcontroller.Webhooks[*versioned.Gadget]{
			Defaulter: gadgetDefaulter{}, // an admission.Defaulter[*versioned.Gadget]
			Validator: gadgetValidator{}, // an admission.Validator[*versioned.Gadget]
			Converter: gadgetConverter,   // conversion.NewHubSpokeConverter(&versioned.Gadget{}, ...)
			Port:      9443,
			Service:   &kopcontroller.WebhookService{Namespace: "gadgets-system", Name: "gadgets-webhooks"},
		}).
		Run(ctrl.SetupSignalHandler())
	if err != nil {
		fmt.Println(err)
	}
}
