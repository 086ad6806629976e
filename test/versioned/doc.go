// Package versioned is a custom resource with two versions, for tests of
// conversion webhooks: Gadget at gadgets.versioned.test.kopgo.dev/v1 (the
// hub, the storage version) and at v2 ([GadgetV2], a spoke in which
// spec.size is renamed spec.count). [ConvertV1ToV2] and [ConvertV2ToV1]
// are hub/spoke functions for controller-runtime's
// conversion.NewSpokeConverter; nothing is lost either way.
//
// [CRD] serves both versions with conversion strategy None: whoever
// serves the conversion webhook (the controller Builder's Webhooks) sets
// spec.conversion. Install it with
// testkit.Options{CRDs: []*apiextensionsv1.CustomResourceDefinition{versioned.CRD()}}
// or create it in a test.
package versioned
