package controller

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kopgo/kopgo/internal/certs"
)

// SetWebhookCertOptions adjusts the options of b's certificate Authority
// last (its clock, lifetimes, backdate): a test hook, not public API.
// Call it after Webhooks.
func SetWebhookCertOptions[T client.Object](b *Builder[T], f func(*certs.Options)) {
	b.webhooks.certOptions = f
}

// WebhookAuthority returns b's certificate Authority once setup made it,
// nil before.
func WebhookAuthority[T client.Object](b *Builder[T]) *certs.Authority {
	return b.webhooks.authority.Load()
}
