// Package crdtest checks an operator's API offline, in unit tests and when
// its manifests are generated: custom resources against their CRD's
// schema and CEL rules with the API server's own validator, CRDs against
// the checks (and the CEL cost limits) the API server applies when one is
// created, and hub-and-spoke conversions for lost data.
//
// The name says what it is for: it is imported by tests (and by
// [crdcheck]), never by an operator's running code. It is one part of
// kopgo's API evolution tools: the controller Builder serves webhooks
// (Builder.Webhooks in package controller) and package migrate moves
// stored objects to a new version; docs/api-evolution.md in the kopgo
// repository puts them in order.
//
//	crd := ... // read with ReadCRDs("config/crd/bases"), or built in Go
//	v, err := crdtest.NewValidator(crd, "v1") // fails if the server would refuse crd
//	errs := v.Validate(ctx, &myv1.Widget{...})              // a create
//	errs = v.ValidateUpdate(ctx, changed, stored)           // an update: oldSelf, ratcheting
//	for _, e := range errs { fmt.Println(e.Field, e.ErrorBody()) }
//
//	crdtest.CheckRoundTrip(t, &v1.Widget{}, []conversion.Convertible{&v1alpha1.Widget{}})
//
// # Validating objects
//
// A [Validator] answers as the API server answers a create or an update of
// a custom resource: the same decoding (pruning of unknown fields,
// defaults), the same preparation (status dropped on create when the CRD
// has a status subresource), and the same validation steps in the same
// order, each with the code the server runs, from
// k8s.io/apiextensions-apiserver: the OpenAPI schema (types, formats,
// patterns, enums, required fields, bounds), metadata, list types,
// embedded resources, then the x-kubernetes-validations rules with the
// server's runtime cost budget, transition rules (oldSelf) and ratcheting
// (an invalid value an update leaves unchanged is accepted). The errors
// are a field.ErrorList: each error's Field and ErrorBody are the field
// and message of a cause in the server's 422 answer, and
// apierrors.NewInvalid(gk, name, errs) is that answer.
//
// The server's custom resource strategy cannot be imported without the
// etcd client, so the few lines that compose these steps are repeated in
// this package (strategy.go says which); the package's tests compare the
// verdicts with a real kube-apiserver (below).
//
// Not covered: anything outside the custom resource's own registry:
// admission (webhooks, ValidatingAdmissionPolicy, quota), name conflicts,
// requests to the status or scale subresources, conversion between
// versions, and strict field validation (an unknown field is pruned
// silently, as with fieldValidation=Ignore or Warn; kubectl asks for
// Strict and gets an error). Feature gates are at the defaults of the
// k8s.io/apiextensions-apiserver version in go.mod, so a cluster of
// another Kubernetes version can differ where the validators changed.
//
// # Rule cost
//
// The API server refuses a CRD whose rules' estimated cost, per rule or
// for the whole schema, exceeds its limits (kubernetes#121162,
// kubernetes#124234): a rule that walks a list of strings is estimated
// with the longest list and strings the schema allows, so an unbounded
// list compared pairwise is refused, even if real objects are small.
// [CheckCRD] runs the server's CRD validation, the cost estimate
// included, and returns the server's errors, such as
//
//	spec.validation.openAPIV3Schema.properties[spec].properties[tags].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)
//
// [NewValidator] refuses such a CRD too. [crdcheck] runs CheckCRD on
// manifests, for a Makefile: kopgo's `make generate` checks its examples'
// CRDs with it. [CheckCRDUpdate] checks an update of an installed CRD,
// where the server does not refuse an unchanged schema for the cost of one
// rule (it still does for the total).
//
// # Which rules belong in CEL
//
// A rule about the object alone belongs in the CRD, as an OpenAPI
// constraint or an x-kubernetes-validations rule: the server enforces it
// on every write, also with dry-run and from any client, with no webhook
// to run, secure and keep available. That covers formats, ranges and
// patterns; rules across fields (minReplicas <= replicas, exactly one of
// two fields, a field required when another is set); immutability and
// allowed transitions (self == oldSelf, a value that may only grow); rules
// over lists and maps (unique names, no reserved port), bounded with
// maxItems and maxLength so that their cost is. Constant defaults belong
// in the schema too.
//
// A webhook is needed when the decision needs more than the object: other
// objects (a referenced Secret exists, a name unique across namespaces),
// the world outside the cluster, who makes the request (CRD rules do not
// see the user; a ValidatingAdmissionPolicy does), a default computed from
// cluster state, parsing CEL cannot do, or a conversion between versions
// whose shapes differ. Mind also that the server evaluates no rule of an
// object with a schema error that blocks them (a missing required field, a
// wrong type, a value too long or not in its enum, and, as the tests show,
// a bad format): the user sees the schema errors first, and the rules'
// errors on the next attempt.
//
// # Conversion that loses nothing
//
// [CheckRoundTrip] fuzzes hub-and-spoke conversions (controller-runtime's
// conversion.Hub and conversion.Convertible, what its conversion webhook
// calls): for each spoke, spoke -> hub -> spoke and hub -> spoke -> hub,
// [DefaultIterations] times each with a seeded filler (sigs.k8s.io/randfill
// with apimachinery's functions for ObjectMeta), compared with go-cmp. The
// first loss fails the test with the field path, the iteration and the
// seed that reproduce it. A field the spoke cannot hold must be kept, as
// cluster-api does: the spoke's ConvertFrom writes it into an annotation,
// and its ConvertTo restores it and removes the annotation.
//
// # Agreement with the API server
//
// The package's tests start a real kube-apiserver (kopgo's testkit),
// install a CRD with schema constraints and rules of every kind above,
// and send it generated objects, creates and updates, comparing the
// server's answer (accepted or not, message, and every cause's field,
// type and message) with the offline verdict; they do the same for CRDs
// refused for their rules' cost. The figures are in the changelog of the
// change that added this package.
//
// [crdcheck]: https://pkg.go.dev/github.com/kopgo/kopgo/crdtest/cmd/crdcheck
package crdtest
