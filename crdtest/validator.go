package crdtest

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Validator validates the custom resources of one version of a CRD as the
// API server does, offline: the same pruning and defaulting, the same
// OpenAPI schema validation (types, formats, patterns, enums, required
// fields, bounds), the same x-kubernetes-list-type and embedded-resource
// checks, and the same x-kubernetes-validations rules with the same cost
// budget, in the same order, with the API server's own code from
// k8s.io/apiextensions-apiserver. A Validator is safe for concurrent use.
type Validator struct {
	name       string // of the CRD, for errors
	gvk        schema.GroupVersionKind
	namespaced bool

	preserveUnknownFields bool
	structural            *structuralschema.Structural
	schemaValidator       apiservervalidation.SchemaValidator
	celValidator          *cel.Validator
	statusEnabled         bool
	scale                 *apiextensions.CustomResourceSubresourceScale
}

// NewValidator returns a Validator for the objects of crd at version. It
// fails if the API server would refuse crd (the errors of [CheckCRD]), or
// if crd has no such version.
func NewValidator(crd *apiextensionsv1.CustomResourceDefinition, version string) (*Validator, error) {
	if crd == nil {
		return nil, fmt.Errorf("new validator: no CustomResourceDefinition")
	}
	if errs := CheckCRD(context.Background(), crd); len(errs) > 0 {
		return nil, fmt.Errorf("new validator: the API server would refuse CustomResourceDefinition %s: %w", crd.Name, errs.ToAggregate())
	}
	crd = crd.DeepCopy()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	var served *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == version {
			served = &crd.Spec.Versions[i]
		}
	}
	if served == nil {
		return nil, fmt.Errorf("new validator: CustomResourceDefinition %s has no version %q", crd.Name, version)
	}
	v := &Validator{
		name:                  crd.Name,
		gvk:                   schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.Kind},
		namespaced:            crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		preserveUnknownFields: crd.Spec.PreserveUnknownFields,
	}

	// As the API server's customresource_handler builds its serving info.
	val, err := apihelpers.GetSchemaForVersion(crd, version)
	if err != nil {
		return nil, fmt.Errorf("new validator: CustomResourceDefinition %s version %s: %w", crd.Name, version, err)
	}
	var internalProps *apiextensions.JSONSchemaProps
	if val != nil {
		internal := &apiextensions.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, internal, nil); err != nil {
			return nil, fmt.Errorf("new validator: CustomResourceDefinition %s version %s: %w", crd.Name, version, err)
		}
		internalProps = internal.OpenAPIV3Schema
		s, err := structuralschema.NewStructural(internalProps)
		if err != nil {
			return nil, fmt.Errorf("new validator: CustomResourceDefinition %s version %s: %w", crd.Name, version, err)
		}
		s = s.DeepCopy()
		if err := structuraldefaulting.PruneDefaults(s); err != nil {
			return nil, fmt.Errorf("new validator: CustomResourceDefinition %s version %s: %w", crd.Name, version, err)
		}
		v.structural = s
	}
	v.schemaValidator, _, err = apiservervalidation.NewSchemaValidator(internalProps)
	if err != nil {
		return nil, fmt.Errorf("new validator: CustomResourceDefinition %s version %s: %w", crd.Name, version, err)
	}
	v.celValidator = cel.NewValidator(v.structural, true, celconfig.PerCallLimit)

	subresources, err := apihelpers.GetSubresourcesForVersion(crd, version)
	if err != nil {
		return nil, fmt.Errorf("new validator: CustomResourceDefinition %s version %s: %w", crd.Name, version, err)
	}
	if subresources != nil {
		v.statusEnabled = subresources.Status != nil
		if subresources.Scale != nil {
			v.scale = &apiextensions.CustomResourceSubresourceScale{}
			if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(subresources.Scale, v.scale, nil); err != nil {
				return nil, fmt.Errorf("new validator: CustomResourceDefinition %s version %s: %w", crd.Name, version, err)
			}
		}
	}
	return v, nil
}

// GroupVersionKind is the kind and version of the objects v validates.
func (v *Validator) GroupVersionKind() schema.GroupVersionKind { return v.gvk }

// Validate validates obj as the API server validates a create request
// that sends it: obj is decoded as its JSON, pruned of fields the schema
// does not know, defaulted, stripped of its status when the CRD has a
// status subresource, and validated. obj may be typed (a Go struct of the
// API) or *unstructured.Unstructured; it is not modified. An empty
// apiVersion and kind are taken as v's; an empty namespace of a
// namespaced kind as "default", the request's namespace in a client.
//
// The errors are those the API server returns as the causes of its 422
// Invalid answer: field.Error's Field is the cause's field and ErrorBody()
// its message. The server lists the errors of one step (schema, then
// rules) in an order that varies between requests (Go map order); here
// they are sorted by field, so that the same object always gets the same
// list.
func (v *Validator) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	u, errs := v.decode(obj)
	if len(errs) > 0 {
		return errs
	}
	// The strategy's PrepareForCreate.
	if v.statusEnabled {
		delete(u.Object, "status")
	}
	u.SetGeneration(1)
	return v.validateCreate(ctx, u)
}

// ValidateUpdate validates obj as the API server validates an update
// request that sends obj while old is stored: as [Validator.Validate],
// with old for the transition rules (oldSelf) and ratcheting (an invalid
// value that the update leaves unchanged is not an error, as in the API
// server since Kubernetes 1.30). With a status subresource, obj's status
// is replaced by old's, as the server does on the main resource.
//
// old should be the object as the API server returned it (with its
// resourceVersion and uid); neither is modified.
func (v *Validator) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	u, errs := v.decode(obj)
	if len(errs) > 0 {
		return errs
	}
	uOld, errs := v.decode(old)
	if len(errs) > 0 {
		return errs
	}
	// The strategy's PrepareForUpdate (the generation is left as sent:
	// no validation reads it).
	if v.statusEnabled {
		if status, ok := uOld.Object["status"]; ok {
			u.Object["status"] = status
		} else {
			delete(u.Object, "status")
		}
	}
	return v.validateUpdate(ctx, u, uOld)
}

// decode turns obj into the unstructured object the API server's decoder
// makes of its JSON: numbers as int64 or float64, unknown fields pruned
// (unless the CRD preserves them), ObjectMeta coerced, defaults applied.
func (v *Validator) decode(obj runtime.Object) (*unstructured.Unstructured, field.ErrorList) {
	if obj == nil {
		return nil, field.ErrorList{field.Required(nil, fmt.Sprintf("an object of %s", v.gvk.Kind))}
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(nil, fmt.Errorf("encode %s: %w", v.gvk.Kind, err))}
	}
	u := &unstructured.Unstructured{}
	if err := utiljson.Unmarshal(data, &u.Object); err != nil {
		return nil, field.ErrorList{field.InternalError(nil, fmt.Errorf("decode %s: %w", v.gvk.Kind, err))}
	}
	if u.Object == nil {
		u.Object = map[string]any{}
	}
	if u.GetAPIVersion() == "" && u.GetKind() == "" {
		u.SetGroupVersionKind(v.gvk)
	}
	if v.namespaced && u.GetNamespace() == "" {
		u.SetNamespace("default")
	}
	if err := v.coerce(u); err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), nil, err.Error())}
	}
	if v.structural != nil {
		structuraldefaulting.Default(u.Object, v.structural)
	}
	return u, nil
}

// coerce is the API server's unstructuredSchemaCoercer.apply, for an
// object of v's kind.
func (v *Validator) coerce(u *unstructured.Unstructured) error {
	kind, foundKind, err := unstructured.NestedString(u.Object, "kind")
	if err != nil {
		return err
	}
	apiVersion, foundAPIVersion, err := unstructured.NestedString(u.Object, "apiVersion")
	if err != nil {
		return err
	}
	objectMeta, foundObjectMeta, _, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{})
	if err != nil {
		return err
	}
	if v.structural != nil {
		if !v.preserveUnknownFields {
			structuralpruning.Prune(u.Object, v.structural, true)
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, v.structural)
		}
		if ferr := schemaobjectmeta.Coerce(nil, u.Object, v.structural, false, false); ferr != nil {
			return ferr
		}
	}
	if foundKind {
		u.SetKind(kind)
	}
	if foundAPIVersion {
		u.SetAPIVersion(apiVersion)
	}
	if foundObjectMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
			return err
		}
	}
	return nil
}
