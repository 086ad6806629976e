package controller

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/kopgo/kopgo/internal/certs"
)

// DefaultWebhookPort is where the webhook server listens when
// [Webhooks.Port] is zero: controller-runtime's default, 9443.
const DefaultWebhookPort = 9443

// Webhooks configures the admission and conversion webhooks a Builder
// serves for its kind T ([Builder.Webhooks]). At least one of Defaulter,
// Validator and Converter, and exactly one of Service and URL, are
// required.
type Webhooks[T client.Object] struct {
	// Defaulter sets defaults on T at create and update: a mutating
	// webhook, served by controller-runtime's admission.WithDefaulter.
	Defaulter admission.Defaulter[T]
	// DefaulterOptions are passed to admission.WithDefaulter (such as
	// admission.DefaulterRemoveUnknownOrOmitableFields).
	DefaulterOptions []admission.DefaulterOption
	// Validator accepts or refuses T at create and update, and at
	// delete if it implements [DeleteValidator] and asks: a validating
	// webhook, served by controller-runtime's admission.WithValidator.
	// Its error is the API server's answer: return an
	// apierrors.NewInvalid with field paths, so the message names the
	// field.
	Validator admission.Validator[T]
	// Converter converts between T's versions, as controller-runtime's
	// builder takes it: conversion.NewHubSpokeConverter(hub,
	// conversion.NewSpokeConverter(spoke, hubToSpoke, spokeToHub), ...)
	// with T or another version as the hub. Every version of T's kind
	// in the scheme needs a spoke converter but the hub. Served at
	// /convert by controller-runtime's conversion handler, and written
	// into the CRD's spec.conversion.
	Converter func(*runtime.Scheme) (conversion.Converter, error)

	// Host is the address the webhook server listens on; all addresses
	// if empty.
	Host string
	// Port the webhook server listens on; [DefaultWebhookPort] if zero.
	Port int

	// Service is how the API server reaches the webhooks in a cluster:
	// the operator's Service. The serving certificate names
	// name.namespace.svc and name.namespace.svc.cluster.local.
	Service *WebhookService
	// URL is how the API server reaches the webhooks from outside the
	// cluster: a base URL such as https://127.0.0.1:9443 (tests, an
	// operator run on a developer's machine). The serving certificate
	// names its host (an IP address goes into the IP SANs).
	URL string

	// CASecret is the Secret that holds the webhooks' CA. Name
	// defaults to "<controller name>-webhook-ca", Namespace to
	// Service's; with URL, Namespace is required. Every replica uses
	// the same Secret.
	CASecret types.NamespacedName
}

// WebhookService names the Service through which the API server reaches
// the webhooks.
type WebhookService struct {
	// Namespace and Name of the Service.
	Namespace, Name string
	// Port of the Service (not of the pod); 443 if zero.
	Port int32
}

// DeleteValidator is implemented by a [Webhooks.Validator] that decides
// something on delete: when ValidatesDelete returns true, the
// ValidatingWebhookConfiguration includes DELETE, so its ValidateDelete
// is called. Without it, deletes do not call the webhook, and a webhook
// that is down cannot block them.
type DeleteValidator interface {
	// ValidatesDelete reports whether deletes are to be validated.
	ValidatesDelete() bool
}

// Webhooks serves, for T, the webhooks w names: typed defaulting,
// typed validation and conversion between T's versions, with
// certificates the operator manages itself (see the package
// documentation, "Webhooks"). It works with [Builder.Run] and
// [Builder.Setup] alike. Mistakes in w (each naming its field) are
// returned by Run or Setup; so is a second call.
func (b *Builder[T]) Webhooks(w Webhooks[T]) *Builder[T] {
	if b.webhooks != nil {
		b.errs = append(b.errs, fmt.Errorf("controller %q: Webhooks called twice", b.name))
	}
	b.errs = append(b.errs, w.check(b.name)...)
	b.webhooks = &webhookConfig[T]{opts: w}
	return b
}

// webhookConfig is what Webhooks recorded, and what setup made of it.
type webhookConfig[T client.Object] struct {
	opts Webhooks[T]
	// certOptions, if set, adjusts the Authority's options last: tests
	// drive its clock and shorten its lifetimes (webhook_export_test.go).
	certOptions func(*certs.Options)
	authority   atomic.Pointer[certs.Authority]
	// ready is the webhooks' readiness check, set by setup.
	ready func(*http.Request) error
}

// check returns the mistakes in w, each naming the field, for the
// controller name.
func (w *Webhooks[T]) check(name string) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("controller %q: Webhooks."+format, append([]any{name}, args...)...))
	}
	if w.Defaulter == nil && w.Validator == nil && w.Converter == nil {
		errs = append(errs, fmt.Errorf("controller %q: Webhooks: none of Defaulter, Validator and Converter is set", name))
	}
	if w.Port < 0 || w.Port > 65535 {
		bad("Port: %d is not a port", w.Port)
	}
	switch {
	case w.Service == nil && w.URL == "":
		errs = append(errs, fmt.Errorf("controller %q: Webhooks: one of Service and URL is required", name))
	case w.Service != nil && w.URL != "":
		errs = append(errs, fmt.Errorf("controller %q: Webhooks: Service and URL are both set", name))
	case w.Service != nil:
		if w.Service.Namespace == "" || w.Service.Name == "" {
			bad("Service: namespace and name are required, got %q", w.Service.Namespace+"/"+w.Service.Name)
		}
		if w.Service.Port < 0 || w.Service.Port > 65535 {
			bad("Service.Port: %d is not a port", w.Service.Port)
		}
	default:
		u, err := url.Parse(w.URL)
		switch {
		case err != nil:
			bad("URL: %v", err)
		case u.Scheme != "https" || u.Host == "" || u.Hostname() == "":
			bad("URL: %q: want https://host[:port][/path]", w.URL)
		case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
			bad("URL: %q: no query, fragment or user info allowed", w.URL)
		}
		if w.CASecret.Namespace == "" {
			bad("CASecret: a namespace is required with URL")
		}
	}
	return errs
}

// caSecret is CASecret with its defaults.
func (w *Webhooks[T]) caSecret(name string) types.NamespacedName {
	s := w.CASecret
	if s.Name == "" {
		s.Name = name + "-webhook-ca"
	}
	if s.Namespace == "" && w.Service != nil {
		s.Namespace = w.Service.Namespace
	}
	return s
}

// dnsNames are the names in the serving certificate.
func (w *Webhooks[T]) dnsNames() []string {
	if w.Service != nil {
		svc := w.Service.Name + "." + w.Service.Namespace + ".svc"
		return []string{svc, svc + ".cluster.local"}
	}
	u, err := url.Parse(w.URL)
	if err != nil {
		return nil
	}
	return []string{u.Hostname()}
}

// port is Port with its default.
func (w *Webhooks[T]) port() int {
	if w.Port == 0 {
		return DefaultWebhookPort
	}
	return w.Port
}

// baseURL is URL without a trailing slash.
func (w *Webhooks[T]) baseURL() string { return strings.TrimSuffix(w.URL, "/") }
