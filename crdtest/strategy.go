package crdtest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/operation"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// This file follows, step for step, the API server's custom resource
// strategy (k8s.io/apiextensions-apiserver/pkg/registry/customresource,
// strategy.go and validator.go, v0.37.1). That package cannot be imported
// without the etcd client, so its composition of the validators is
// repeated here; every validator it calls is called, from the same
// packages. Ratcheting (GA and locked on since Kubernetes 1.33) is always
// on.

// validateCreate is customResourceStrategy.Validate.
func (v *Validator) validateCreate(ctx context.Context, u *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, v.validateResource(ctx, u, nil)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, v.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, u.Object)...)
	if has, err := hasBlockingErr(errs); has {
		errs = append(errs, err)
	} else if v.celValidator != nil {
		celErrs, _ := v.celValidator.Validate(ctx, nil, v.structural, u.Object, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, byField(celErrs)...)
	}
	return errs
}

// validateUpdate is customResourceStrategy.ValidateUpdate.
func (v *Validator) validateUpdate(ctx context.Context, u, old *unstructured.Unstructured) field.ErrorList {
	correlated := common.NewCorrelatedObject(u.Object, old.Object, &model.Structural{Structural: v.structural})
	var errs field.ErrorList
	errs = append(errs, v.validateResource(ctx, u, old, apiservervalidation.WithRatcheting(correlated))...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, v.structural, false)...)
	if oldErrs := structurallisttype.ValidateListSetsAndMaps(nil, v.structural, old.Object); len(oldErrs) == 0 {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, u.Object)...)
	}
	if has, err := hasBlockingErr(errs); has {
		errs = append(errs, err)
	} else if v.celValidator != nil {
		celErrs, _ := v.celValidator.Validate(ctx, nil, v.structural, u.Object, old.Object, celconfig.RuntimeCELCostBudget, cel.WithRatcheting(correlated))
		errs = append(errs, byField(celErrs)...)
	}
	return errs
}

// validateResource is customResourceValidator.Validate (old == nil) and
// ValidateUpdate.
func (v *Validator) validateResource(ctx context.Context, u, old *unstructured.Unstructured, opts ...apiservervalidation.ValidationOption) field.ErrorList {
	if errs := v.validateTypeMeta(u); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	metadata, metaErrs := objectMetaOf(u)
	if old == nil {
		if len(metaErrs) > 0 {
			errs = append(errs, metaErrs...)
		} else {
			errs = append(errs, metavalidation.ValidateObjectMetaDeclaratively(ctx, operation.Create, metadata, nil, v.namespaced, metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"), utilfeature.DefaultFeatureGate.Enabled(features.DeclarativeValidationBeta))...)
		}
		errs = append(errs, byField(apiservervalidation.ValidateCustomResource(nil, u.UnstructuredContent(), v.schemaValidator))...)
	} else {
		oldMetadata, oldMetaErrs := objectMetaOf(old)
		switch {
		case len(metaErrs) > 0:
			errs = append(errs, metaErrs...)
		case len(oldMetaErrs) > 0:
			errs = append(errs, oldMetaErrs...)
		default:
			errs = append(errs, metavalidation.ValidateObjectMetaDeclaratively(ctx, operation.Update, metadata, oldMetadata, v.namespaced, nil, field.NewPath("metadata"), utilfeature.DefaultFeatureGate.Enabled(features.DeclarativeValidationBeta))...)
		}
		errs = append(errs, byField(apiservervalidation.ValidateCustomResourceUpdate(nil, u.UnstructuredContent(), old.UnstructuredContent(), v.schemaValidator, opts...))...)
	}
	errs = append(errs, v.validateScaleSpec(u)...)
	errs = append(errs, v.validateScaleStatus(u)...)
	return errs
}

// validateTypeMeta is customResourceValidator.ValidateTypeMeta.
func (v *Validator) validateTypeMeta(u *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if u.GetKind() != v.gvk.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), u.GetKind(), fmt.Sprintf("must be %v", v.gvk.Kind)))
	}
	if u.GetAPIVersion() != v.gvk.Group+"/"+v.gvk.Version {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), fmt.Sprintf("must be %v", v.gvk.Group+"/"+v.gvk.Version)))
	}
	return errs
}

// validateScaleSpec is customResourceValidator.ValidateScaleSpec.
func (v *Validator) validateScaleSpec(u *unstructured.Unstructured) field.ErrorList {
	if v.scale == nil {
		return nil
	}
	return validateReplicas(u, v.scale.SpecReplicasPath)
}

// validateScaleStatus is customResourceValidator.ValidateScaleStatus.
func (v *Validator) validateScaleStatus(u *unstructured.Unstructured) field.ErrorList {
	if v.scale == nil {
		return nil
	}
	errs := validateReplicas(u, v.scale.StatusReplicasPath)
	if v.scale.LabelSelectorPath != nil {
		p := strings.TrimPrefix(*v.scale.LabelSelectorPath, ".")
		selector, _, err := unstructured.NestedString(u.Object, strings.Split(p, ".")...)
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath(*v.scale.LabelSelectorPath), selector, err.Error()))
		}
	}
	return errs
}

func validateReplicas(u *unstructured.Unstructured, path string) field.ErrorList {
	p := strings.TrimPrefix(path, ".")
	replicas, _, err := unstructured.NestedInt64(u.Object, strings.Split(p, ".")...)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(field.NewPath(path), replicas, err.Error())}
	case replicas < 0:
		return field.ErrorList{field.Invalid(field.NewPath(path), replicas, "should be a non-negative integer")}
	case replicas > math.MaxInt32:
		return field.ErrorList{field.Invalid(field.NewPath(path), replicas, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32))}
	}
	return nil
}

// objectMetaOf is the strategy's getObjectMeta.
func objectMetaOf(u *unstructured.Unstructured) (*metav1.ObjectMeta, field.ErrorList) {
	raw := u.Object["metadata"]
	if raw == nil {
		return &metav1.ObjectMeta{}, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, fmt.Sprintf("expected map[string]interface{}, got %T", raw))}
	}
	meta := &metav1.ObjectMeta{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, meta); err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, err.Error())}
	}
	return meta, nil
}

// hasBlockingErr is the strategy's: schema errors after which the
// x-kubernetes-validations rules are not evaluated.
func hasBlockingErr(errs field.ErrorList) (bool, *field.Error) {
	for _, err := range errs {
		if err.Type == field.ErrorTypeNotSupported || err.Type == field.ErrorTypeRequired || err.Type == field.ErrorTypeTooLong || err.Type == field.ErrorTypeTooMany || err.Type == field.ErrorTypeTypeInvalid {
			return true, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
		}
	}
	return false, nil
}

// byField sorts errs by field, stably.
func byField(errs field.ErrorList) field.ErrorList {
	slices.SortStableFunc(errs, func(a, b *field.Error) int { return strings.Compare(a.Field, b.Field) })
	return errs
}
