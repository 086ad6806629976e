package controller_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	kopcontroller "github.com/kopgo/kopgo/controller"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/versioned"
)

func init() {
	utilruntime.Must(versioned.AddToScheme(scheme))
}

// gadgetDefaulter sets spec.size to 7 when it is unset.
type gadgetDefaulter struct{}

func (gadgetDefaulter) Default(_ context.Context, g *versioned.Gadget) error {
	if g.Spec.Size == 0 {
		g.Spec.Size = 7
	}
	return nil
}

// gadgetValidator refuses a spec.size above 100, naming the field.
type gadgetValidator struct{}

func (gadgetValidator) validate(g *versioned.Gadget) (admission.Warnings, error) {
	if g.Spec.Size > 100 {
		return nil, apierrors.NewInvalid(versioned.V1.WithKind("Gadget").GroupKind(), g.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "size"), g.Spec.Size, "must be at most 100"),
		})
	}
	return nil, nil
}

func (v gadgetValidator) ValidateCreate(_ context.Context, g *versioned.Gadget) (admission.Warnings, error) {
	return v.validate(g)
}

func (v gadgetValidator) ValidateUpdate(_ context.Context, _, g *versioned.Gadget) (admission.Warnings, error) {
	return v.validate(g)
}

func (gadgetValidator) ValidateDelete(context.Context, *versioned.Gadget) (admission.Warnings, error) {
	return nil, nil
}

// gadgetConverter converts v1 (the hub) to and from v2.
var gadgetConverter = conversion.NewHubSpokeConverter(&versioned.Gadget{},
	conversion.NewSpokeConverter(&versioned.GadgetV2{}, versioned.ConvertV1ToV2, versioned.ConvertV2ToV1))

var installGadgets sync.Once

// gadgetWebhooks installs the Gadget CRD once, and returns a Builder of
// controller name serving w at https://127.0.0.1:<free port>, with its
// CA Secret in ns. The configurations and the CRD's conversion are
// removed when the test ends, so no later test meets a webhook that is
// gone.
func gadgetWebhooks(t *testing.T, name, ns string, w kopcontroller.Webhooks[*versioned.Gadget]) *kopcontroller.Builder[*versioned.Gadget] {
	t.Helper()
	ctx := t.Context()
	c := cluster.Client()
	installGadgets.Do(func() {
		if err := c.Create(ctx, versioned.CRD()); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "Gadget CRD established", func() error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, types.NamespacedName{Name: versioned.CRD().Name}, crd); err != nil {
				return err
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return c.List(ctx, &versioned.GadgetList{})
				}
			}
			return fmt.Errorf("not established")
		})
	})
	t.Cleanup(func() {
		ctx := context.Background()
		_ = c.Delete(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}})
		_ = c.Delete(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}})
		patch := []byte(`{"spec":{"conversion":{"strategy":"None","webhook":null}}}`)
		crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: versioned.CRD().Name}}
		if err := c.Patch(ctx, crd, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Errorf("reset the Gadget CRD's conversion: %v", err)
		}
	})
	if w.URL == "" {
		w.Port = freePort(t)
		w.Host = "127.0.0.1"
		w.URL = fmt.Sprintf("https://127.0.0.1:%d", w.Port)
	}
	if w.CASecret.Namespace == "" {
		w.CASecret.Namespace = ns
	}
	noop := reconciler.Func[*versioned.Gadget](func(context.Context, *versioned.Gadget, *reconciler.Env) (reconciler.Action, error) {
		return reconciler.Done(), nil
	})
	return kopcontroller.New[*versioned.Gadget](name, noop).Config(cluster.Config).Scheme(scheme).Webhooks(w)
}

// waitReady waits until /readyz on port answers 200.
func waitReady(t *testing.T, port int) {
	t.Helper()
	eventually(t, 30*time.Second, "/readyz 200", func() error {
		code, body, err := get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
		if err == nil && code != 200 {
			err = fmt.Errorf("%d %s", code, body)
		}
		return err
	})
}

func gadget(ns, name string, size int64) *versioned.Gadget {
	return &versioned.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: versioned.GadgetSpec{Size: size}}
}

// Cold start, defaulting, validation, readiness, the configurations
// written and a server-side dry run, through one operator.
func TestWebhooksDefaultValidateAndDryRun(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := t.Context()
	c := cluster.Client()
	health := freePort(t)
	b := gadgetWebhooks(t, "gadget-admission", ns, kopcontroller.Webhooks[*versioned.Gadget]{
		Defaulter: gadgetDefaulter{}, Validator: gadgetValidator{},
	}).HealthPort(health)

	start := time.Now()
	run(t, b)
	// Cold start: until the webhooks serve, a create is either refused
	// (the configuration is there, the server not yet) or admitted
	// without its default (no configuration yet); neither counts.
	var coldStart time.Duration
	attempts := 0
	eventually(t, 30*time.Second, "first admitted create", func() error {
		attempts++
		g := gadget(ns, fmt.Sprintf("cold-%d", attempts), 0)
		if err := c.Create(ctx, g); err != nil {
			return err
		}
		if g.Spec.Size != 7 {
			_ = c.Delete(ctx, g)
			return fmt.Errorf("admitted without the webhook: spec.size %d", g.Spec.Size)
		}
		coldStart = time.Since(start)
		return nil
	})
	t.Logf("cold start to the first admitted create: %s (%d attempts)", coldStart, attempts)
	if coldStart > 5*time.Second {
		t.Errorf("cold start took %s, the issue's bound is 5s", coldStart)
	}
	waitReady(t, health)

	bad := gadget(ns, "too-big", 101)
	err := c.Create(ctx, bad)
	if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
		t.Fatalf("create with spec.size 101: got %v, want the validator's refusal", err)
	}
	for _, want := range []string{"spec.size", "must be at most 100"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}

	// sideEffects None: a server-side dry run goes through both webhooks.
	dry := gadget(ns, "dry", 0)
	if err := c.Create(ctx, dry, client.DryRunAll); err != nil {
		t.Fatalf("dry-run create: %v", err)
	}
	if dry.Spec.Size != 7 {
		t.Errorf("dry-run create: spec.size %d, want the default 7", dry.Spec.Size)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(dry), &versioned.Gadget{}); !apierrors.IsNotFound(err) {
		t.Errorf("dry-run create persisted the object: %v", err)
	}

	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, types.NamespacedName{Name: versioned.CRD().Name}, crd); err != nil {
		t.Fatal(err)
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.Get(ctx, types.NamespacedName{Name: "gadget-admission"}, vwc); err != nil {
		t.Fatal(err)
	}
	if len(vwc.OwnerReferences) != 1 || vwc.OwnerReferences[0].UID != crd.UID {
		t.Errorf("ValidatingWebhookConfiguration owners %v, want the CRD %s", vwc.OwnerReferences, crd.UID)
	}
	wh := vwc.Webhooks[0]
	if *wh.SideEffects != admissionregistrationv1.SideEffectClassNone || *wh.FailurePolicy != admissionregistrationv1.Fail ||
		*wh.MatchPolicy != admissionregistrationv1.Equivalent || len(wh.Rules) != 1 || len(wh.Rules[0].Operations) != 2 {
		t.Errorf("validating webhook: sideEffects %s, failurePolicy %s, matchPolicy %s, rules %+v",
			*wh.SideEffects, *wh.FailurePolicy, *wh.MatchPolicy, wh.Rules)
	}
}

// A CRD with two versions, read and written at both through the
// conversion webhook.
func TestWebhooksConvertBetweenVersions(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := t.Context()
	c := cluster.Client()
	health := freePort(t)
	run(t, gadgetWebhooks(t, "gadget-conversion", ns, kopcontroller.Webhooks[*versioned.Gadget]{Converter: gadgetConverter}).HealthPort(health))
	// Ready: the CRD's conversion names the webhook, which serves.
	waitReady(t, health)

	// Written at v2 (stored at v1), read at both.
	v2 := &versioned.GadgetV2{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g"}, Spec: versioned.GadgetV2Spec{Count: 5, Message: "at v2"}}
	if err := c.Create(ctx, v2); err != nil {
		t.Fatal(err)
	}
	v1 := &versioned.Gadget{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(v2), v1); err != nil {
		t.Fatal(err)
	}
	if v1.Spec != (versioned.GadgetSpec{Size: 5, Message: "at v2"}) {
		t.Errorf("read at v1: %+v, want size 5, message %q", v1.Spec, "at v2")
	}
	// Written at v1, read at v2.
	v1.Spec.Message = "at v1"
	v1.Spec.Size = 6
	if err := c.Update(ctx, v1); err != nil {
		t.Fatal(err)
	}
	got := &versioned.GadgetV2{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(v2), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec != (versioned.GadgetV2Spec{Count: 6, Message: "at v1"}) {
		t.Errorf("read at v2: %+v, want count 6, message %q", got.Spec, "at v1")
	}
	list := &versioned.GadgetV2List{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Spec.Count != 6 {
		t.Errorf("list at v2: %+v", list.Items)
	}
}

// Mistakes in Webhooks are returned by Run as Config errors naming the
// field.
func TestWebhooksMistakes(t *testing.T) {
	noop := reconciler.Func[*versioned.Gadget](nil)
	svc := &kopcontroller.WebhookService{Namespace: "ns", Name: "svc"}
	for _, tc := range []struct {
		name string
		w    kopcontroller.Webhooks[*versioned.Gadget]
		want string
	}{
		{"nothing served", kopcontroller.Webhooks[*versioned.Gadget]{Service: svc}, "none of Defaulter, Validator and Converter"},
		{"no address", kopcontroller.Webhooks[*versioned.Gadget]{Validator: gadgetValidator{}}, "one of Service and URL is required"},
		{"both addresses", kopcontroller.Webhooks[*versioned.Gadget]{Validator: gadgetValidator{}, Service: svc, URL: "https://127.0.0.1:9443"}, "Service and URL are both set"},
		{"http", kopcontroller.Webhooks[*versioned.Gadget]{Validator: gadgetValidator{}, URL: "http://127.0.0.1:9443", CASecret: types.NamespacedName{Namespace: "ns"}}, "Webhooks.URL"},
		{"URL without a CA namespace", kopcontroller.Webhooks[*versioned.Gadget]{Validator: gadgetValidator{}, URL: "https://127.0.0.1:9443"}, "Webhooks.CASecret"},
		{"service without a name", kopcontroller.Webhooks[*versioned.Gadget]{Validator: gadgetValidator{}, Service: &kopcontroller.WebhookService{Namespace: "ns"}}, "Webhooks.Service"},
		{"bad port", kopcontroller.Webhooks[*versioned.Gadget]{Validator: gadgetValidator{}, Service: svc, Port: 70000}, "Webhooks.Port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := kopcontroller.New[*versioned.Gadget]("g", noop).Config(cluster.Config).Scheme(scheme).Webhooks(tc.w).Run(t.Context())
			if koperrors.KindOf(err) != koperrors.Config || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run: %v, want a Config error saying %q", err, tc.want)
			}
		})
	}
}

// Under Setup the webhooks run in your manager, and its /readyz waits
// for them.
func TestWebhooksSetupInYourManager(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := t.Context()
	c := cluster.Client()
	health := freePort(t)
	mgr, err := manager.New(cluster.Config, manager.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: fmt.Sprintf("127.0.0.1:%d", health),
		Controller:             config.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	b := gadgetWebhooks(t, "gadget-setup", ns, kopcontroller.Webhooks[*versioned.Gadget]{Defaulter: gadgetDefaulter{}})
	if err := b.Setup(mgr); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	code, body, _ := get(fmt.Sprintf("http://127.0.0.1:%d/readyz/webhooks-gadget-setup", health))
	t.Logf("the manager's readyz check at start: %d %s", code, body)
	waitReady(t, health)
	g := gadget(ns, "g", 0)
	if err := c.Create(ctx, g); err != nil {
		t.Fatal(err)
	}
	if g.Spec.Size != 7 {
		t.Errorf("created once ready: spec.size %d, want the default 7", g.Spec.Size)
	}
}
