package controller_test

import (
	"fmt"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/internal/certs"
	"github.com/kopgo/kopgo/test/versioned"
)

// What the Builder writes for its webhooks is written again every Resync
// (a minute; two seconds here), not only when the caBundle changes: a
// ValidatingWebhookConfiguration deleted by hand comes back, and a CRD
// whose spec.conversion a later apply of its manifest reset to None
// converts through the webhook again. Before, both stayed broken until
// the next rotation: a week for the serving certificate.
func TestWebhooksRepairWhatOthersUndid(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := t.Context()
	c := cluster.Client()
	health := freePort(t)
	const name = "gadget-repair"
	b := gadgetWebhooks(t, name, ns, kopcontroller.Webhooks[*versioned.Gadget]{Validator: gadgetValidator{}, Converter: gadgetConverter})
	kopcontroller.SetWebhookCertOptions(b, func(o *certs.Options) { o.Resync = 2 * time.Second })
	run(t, b.HealthPort(health))
	waitReady(t, health)

	if err := c.Delete(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: versioned.CRD().Name}}
	patch := []byte(`{"spec":{"conversion":{"strategy":"None","webhook":null}}}`)
	if err := c.Patch(ctx, crd, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the configuration and the CRD's conversion written again", func() error {
		cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := c.Get(ctx, types.NamespacedName{Name: name}, cfg); err != nil {
			return err
		}
		if len(cfg.Webhooks) != 1 || len(cfg.Webhooks[0].ClientConfig.CABundle) == 0 {
			return fmt.Errorf("webhooks %+v", cfg.Webhooks)
		}
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(crd), got); err != nil {
			return err
		}
		if conv := got.Spec.Conversion; conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook == nil ||
			len(conv.Webhook.ClientConfig.CABundle) == 0 {
			return fmt.Errorf("conversion %+v", conv)
		}
		return nil
	})
	if s := kopcontroller.WebhookAuthority(b).Stats(); s.Republished == 0 || s.Published != 1 {
		t.Errorf("stats %+v: want 1 bundle published and republished at least once", s)
	}
}
