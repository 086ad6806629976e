package controller

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1ac "k8s.io/apiextensions-apiserver/pkg/client/applyconfiguration/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	admissionregistrationv1ac "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// publish writes bundle where the API server reads it: the
// MutatingWebhookConfiguration (with a Defaulter), the
// ValidatingWebhookConfiguration (with a Validator) and the CRD's
// spec.conversion (with a Converter), each by server-side apply as
// t.fieldOwner, forced: only the fields written here are taken (see the
// package documentation, "Webhooks", for who owns what). The
// configurations are owned by the CRD, so they go when it goes.
func (t *webhookTarget) publish(ctx context.Context, c client.Client, bundle []byte) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, types.NamespacedName{Name: t.crd}, crd); err != nil {
		return fmt.Errorf("read CustomResourceDefinition %s (the owner of the webhook configurations): %w", t.crd, err)
	}
	owner := metav1ac.OwnerReference().WithAPIVersion(apiextensionsv1.SchemeGroupVersion.String()).
		WithKind("CustomResourceDefinition").WithName(crd.Name).WithUID(crd.UID)
	opts := []client.ApplyOption{client.FieldOwner(t.fieldOwner), client.ForceOwnership}
	if t.mutatePath != "" {
		wh := admissionregistrationv1ac.MutatingWebhook().WithName("default." + t.crd).
			WithClientConfig(t.admissionClientConfig(t.mutatePath, bundle)).
			WithRules(t.rule(false)).
			WithSideEffects(admissionregistrationv1.SideEffectClassNone).
			WithAdmissionReviewVersions("v1").
			WithFailurePolicy(admissionregistrationv1.Fail).
			WithMatchPolicy(admissionregistrationv1.Equivalent)
		cfg := admissionregistrationv1ac.MutatingWebhookConfiguration(t.name).WithOwnerReferences(owner).WithWebhooks(wh)
		if err := c.Apply(ctx, cfg, opts...); err != nil {
			return fmt.Errorf("write MutatingWebhookConfiguration %s, field webhooks[0] (caBundle, clientConfig, rules): %w", t.name, err)
		}
	}
	if t.validatePath != "" {
		wh := admissionregistrationv1ac.ValidatingWebhook().WithName("validate." + t.crd).
			WithClientConfig(t.admissionClientConfig(t.validatePath, bundle)).
			WithRules(t.rule(t.validateDelete)).
			WithSideEffects(admissionregistrationv1.SideEffectClassNone).
			WithAdmissionReviewVersions("v1").
			WithFailurePolicy(admissionregistrationv1.Fail).
			WithMatchPolicy(admissionregistrationv1.Equivalent)
		cfg := admissionregistrationv1ac.ValidatingWebhookConfiguration(t.name).WithOwnerReferences(owner).WithWebhooks(wh)
		if err := c.Apply(ctx, cfg, opts...); err != nil {
			return fmt.Errorf("write ValidatingWebhookConfiguration %s, field webhooks[0] (caBundle, clientConfig, rules): %w", t.name, err)
		}
	}
	if t.convert {
		cc := apiextensionsv1ac.WebhookClientConfig().WithCABundle(bundle...)
		if t.service != nil {
			cc.WithService(apiextensionsv1ac.ServiceReference().WithNamespace(t.service.Namespace).
				WithName(t.service.Name).WithPort(t.servicePort()).WithPath(convertPath))
		} else {
			cc.WithURL(t.baseURL + convertPath)
		}
		cfg := apiextensionsv1ac.CustomResourceDefinition(t.crd).WithSpec(apiextensionsv1ac.CustomResourceDefinitionSpec().
			WithConversion(apiextensionsv1ac.CustomResourceConversion().WithStrategy(apiextensionsv1.WebhookConverter).
				WithWebhook(apiextensionsv1ac.WebhookConversion().WithClientConfig(cc).WithConversionReviewVersions("v1"))))
		if err := c.Apply(ctx, cfg, opts...); err != nil {
			return fmt.Errorf("write CustomResourceDefinition %s, field spec.conversion: %w", t.crd, err)
		}
	}
	return nil
}

// rule matches T's resource at T's version for create and update (and
// delete); matchPolicy Equivalent extends it to every version of the
// resource, sent to the webhook converted to T's version, which is the
// one its typed handler decodes.
func (t *webhookTarget) rule(withDelete bool) *admissionregistrationv1ac.RuleWithOperationsApplyConfiguration {
	ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	if withDelete {
		ops = append(ops, admissionregistrationv1.Delete)
	}
	return admissionregistrationv1ac.RuleWithOperations().WithOperations(ops...).
		WithAPIGroups(t.gvk.Group).WithAPIVersions(t.gvk.Version).WithResources(t.resource)
}

// admissionClientConfig is how the API server reaches the handler at
// path, trusting bundle.
func (t *webhookTarget) admissionClientConfig(path string, bundle []byte) *admissionregistrationv1ac.WebhookClientConfigApplyConfiguration {
	cc := admissionregistrationv1ac.WebhookClientConfig().WithCABundle(bundle...)
	if t.service != nil {
		return cc.WithService(admissionregistrationv1ac.ServiceReference().WithNamespace(t.service.Namespace).
			WithName(t.service.Name).WithPort(t.servicePort()).WithPath(path))
	}
	return cc.WithURL(t.baseURL + path)
}

// servicePort is the Service's port, 443 if zero.
func (t *webhookTarget) servicePort() int32 {
	if t.service.Port == 0 {
		return 443
	}
	return t.service.Port
}
