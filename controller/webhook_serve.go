package controller

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/internal/certs"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// webhookTarget is what the webhook configurations and the CRD's
// conversion settings are written for: T's kind and resource, where the
// handlers are served and how the API server reaches them.
type webhookTarget struct {
	gvk      schema.GroupVersionKind
	resource string // plural
	crd      string // <plural>.<group>
	// name of the configurations and field owner of every write.
	name, fieldOwner string
	mutatePath       string // "" without a Defaulter
	validatePath     string // "" without a Validator
	validateDelete   bool
	convert          bool
	service          *WebhookService
	baseURL          string
}

// setupWebhooks makes the Authority, the webhook server and its handlers
// for T, adds both to mgr, and returns the readiness check: ready once
// the first bundle is published and the server answers TLS.
func (b *Builder[T]) setupWebhooks(mgr manager.Manager) (func(*http.Request) error, error) {
	w := b.webhooks
	o := &w.opts
	fail := func(err error) (func(*http.Request) error, error) {
		return nil, koperrors.WrapKind(koperrors.Config, err, fmt.Sprintf("controller %q: Webhooks", b.name), kopmeta.ObjectRef{})
	}
	scheme := mgr.GetScheme()
	proto := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	gvk, err := apiutil.GVKForObject(proto, scheme)
	if err != nil {
		return fail(err)
	}
	mapping, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fail(fmt.Errorf("resource of %s: %w", gvk, err))
	}
	t := &webhookTarget{
		gvk: gvk, resource: mapping.Resource.Resource, crd: mapping.Resource.Resource + "." + gvk.Group,
		name: b.name, fieldOwner: b.fieldOwner + "-webhooks", service: o.Service, baseURL: o.baseURL(),
	}
	// The server's certificate is the Authority's, picked at each
	// handshake: no files, no restart on rotation. Every replica keeps
	// its certificate and serves: neither runnable is leader-elected.
	var a *certs.Authority
	srv := webhook.NewServer(webhook.Options{Host: o.Host, Port: o.port(), TLSOpts: []func(*tls.Config){func(c *tls.Config) {
		c.GetCertificate = a.GetCertificate
		c.MinVersion = tls.VersionTLS12
	}}})
	if o.Defaulter != nil {
		t.mutatePath = webhookPath("mutate", gvk)
		srv.Register(t.mutatePath, admission.WithDefaulter(scheme, o.Defaulter, o.DefaulterOptions...))
	}
	if o.Validator != nil {
		t.validatePath = webhookPath("validate", gvk)
		if dv, ok := any(o.Validator).(DeleteValidator); ok {
			t.validateDelete = dv.ValidatesDelete()
		}
		srv.Register(t.validatePath, admission.WithValidator(scheme, o.Validator))
	}
	if o.Converter != nil {
		conv, err := o.Converter(scheme)
		if err != nil {
			return fail(fmt.Errorf("field Converter: %w", err))
		}
		reg := conversion.NewRegistry()
		if err := reg.RegisterConverter(gvk.GroupKind(), conv); err != nil {
			return fail(fmt.Errorf("field Converter: %w", err))
		}
		t.convert = true
		srv.Register(convertPath, conversion.NewWebhookHandler(scheme, reg))
	}

	// The Authority and the configurations are read and written through
	// the API server, never a cache: replicas that start together must
	// see each other's Secret, and the manager's cache is not started
	// yet when the first Sync runs.
	live, err := client.New(mgr.GetConfig(), client.Options{Scheme: webhookScheme(), HTTPClient: mgr.GetHTTPClient()})
	if err != nil {
		return fail(err)
	}
	co := certs.Options{
		Secret:   o.caSecret(b.name),
		DNSNames: o.dnsNames(),
		OnBundle: func(ctx context.Context, bundle []byte) error { return t.publish(ctx, live, bundle) },
		// Written again every minute: a configuration deleted by hand, or
		// a spec.conversion a later apply of the CRD's manifest reverted,
		// is repaired within a minute, not at the next rotation.
		Republish: true,
	}
	if w.certOptions != nil {
		w.certOptions(&co)
	}
	if a, err = certs.New(live, co); err != nil {
		return fail(err)
	}
	w.authority.Store(a)
	if err := mgr.Add(a); err != nil {
		return fail(err)
	}
	if err := mgr.Add(srv); err != nil {
		return fail(err)
	}
	started := srv.StartedChecker()
	secret := co.Secret
	return func(req *http.Request) error {
		if a.Bundle() == nil {
			return fmt.Errorf("webhooks: CA Secret %s: trust bundle not published yet", secret)
		}
		if err := started(req); err != nil {
			return fmt.Errorf("webhooks: %w", err)
		}
		return nil
	}, nil
}

// convertPath is where the conversion webhook is served, as
// controller-runtime's builder serves it.
const convertPath = "/convert"

// webhookPath is controller-runtime's builder's path for an admission
// webhook of gvk, such as /validate-example-com-v1-webapp.
func webhookPath(verb string, gvk schema.GroupVersionKind) string {
	return "/" + verb + "-" + strings.ReplaceAll(gvk.Group, ".", "-") + "-" + gvk.Version + "-" + strings.ToLower(gvk.Kind)
}

// webhookScheme knows Secrets, the webhook configurations and CRDs.
func webhookScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	return s
}

// joinReady returns a readiness check that fails with the first of
// checks that fails.
func joinReady(checks ...func(*http.Request) error) func(*http.Request) error {
	return func(req *http.Request) error {
		var errs []error
		for _, c := range checks {
			if c == nil {
				continue
			}
			if err := c(req); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
}
