// Package certs keeps the certificates a kopgo operator serves its
// webhooks with, managed by the operator itself through the API server:
// no volume mount, no cert-manager, no restart on rotation.
//
//	a, err := certs.New(apiClient, certs.Options{ // apiClient reads through the API server
//		Secret:   types.NamespacedName{Namespace: "widgets-system", Name: "widgets-webhook-ca"},
//		DNSNames: []string{"widgets-webhook.widgets-system.svc"},
//		OnBundle: func(ctx context.Context, caBundle []byte) error {
//			return nil // write caBundle into webhook configurations and the CRD's conversion
//		},
//	})
//	_ = mgr.Add(a)                        // Start: Sync when due, and every Resync
//	server := &tls.Server{..., TLSConfig: a.TLSConfig()}
//
// The idea is cert-manager's DynamicAuthority: the CA lives in a Secret
// read and written through the API; the serving certificates are signed
// in memory by each replica and never stored.
//
// # Several replicas, one CA
//
// Every replica runs an [Authority] on the same Secret. The first write
// is a create, so of replicas starting together exactly one creates the
// Secret; the others get AlreadyExists and read the winner's. Every later
// write is an update with the resourceVersion read as precondition: a
// replica that loses gets a conflict and reads again. Both are counted in
// [Stats.Conflicts], never returned as errors. Every decision is a
// function of the Secret and the clock, so replicas that read the same
// Secret decide the same.
//
// # Rotation without downtime
//
// A serving certificate is replaced at [Options.RenewFraction] of its
// validity (default 2/3 of [DefaultLeafLifetime], one week). A CA
// (default [DefaultCALifetime], one year) is replaced in three phases,
// each stored in the Secret (fields [FieldCACert], [FieldCAKey],
// [FieldNextCert], [FieldNextKey], [FieldPreviousCert]):
//
//  1. At RenewFraction of the CA's validity a successor is made and added
//     to the trust bundle (old and new CA concatenated) while the old CA
//     still signs.
//  2. [Options.TrustDelay] later (default one hour: the time for the
//     bundle to reach the webhook configurations and the API server) the
//     successor signs; every replica replaces its serving certificate.
//     The old CA stays in the bundle.
//  3. A leaf lifetime after that, when every certificate the old CA signed
//     has expired (leaves signed while a successor waits are cut to end
//     by then), the old CA leaves the bundle.
//
// Every replica publishes the bundle it read, again within
// [Options.Resync] (shorter than TrustDelay) of a change another replica
// made, so a bundle without the successor is never published after the
// successor signs. The bundle is published through [Options.OnBundle] before a
// certificate signed by a new CA is served, so a client holding the
// bundle of the previous step connects at every step. [New] refuses
// lifetimes with which the old CA would expire before its leaves.
//
// # Repair
//
// [Authority.Start] reads the Secret every [Options.Resync]. A Secret
// deleted is created again (with a new CA: the old key is gone) and the
// new bundle published; an unusable field is logged as a [FieldError]
// naming the Secret and the field, and rewritten; both are counted in
// [Stats.Repairs]. A CA replaced this way is trusted at once, with the
// downtime that cannot be avoided when a key is lost; so is a CA that
// expired while no replica ran.
//
// # Time
//
// Every decision reads [Options.Clock], so tests drive rotations with
// k8s.io/utils/clock/testing's FakeClock instead of waiting.
//
// # Why internal
//
// The controller Builder serves typed defaulting, validation and
// conversion webhooks with these certificates (controller.Builder's
// Webhooks, issue 37): a user names the Service, the Secret and the
// listening port there, and never meets this package. It stays internal
// so its API can change with the Builder's; nothing here depends on the
// Builder.
package certs
