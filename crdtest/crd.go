package crdtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	// The API server's feature gates (ratcheting, CEL) at their defaults.
	_ "k8s.io/apiextensions-apiserver/pkg/features"
)

// CheckCRD validates crd as the API server validates a
// CustomResourceDefinition it is asked to create, with the same code: the
// schema must be structural, every x-kubernetes-validations rule must
// compile, and the estimated cost of each rule, and of all of them
// together, must be within the limits the server enforces. The errors
// carry the server's field paths (spec.validation.openAPIV3Schema... when
// every version has the same schema, as the server reports them) and
// messages, such as
//
//	spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 2.1x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)
//
// crd is not modified. A nil or empty result means the server would accept
// the CRD.
func CheckCRD(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	internal, err := toInternal(crd)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	prepareCRDForCreate(internal)
	return crdvalidation.ValidateCustomResourceDefinition(ctx, internal)
}

// CheckCRDUpdate validates crd as the API server validates an update of
// old to crd (old as read from the server, with its resourceVersion).
// Unlike [CheckCRD], a version whose schema is unchanged is not refused
// for the estimated cost of one of its rules, so that an installed CRD
// stays updatable when a newer server estimates more; the limit on the
// total cost of a schema still applies, and a changed schema is checked
// in full.
func CheckCRDUpdate(ctx context.Context, crd, old *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	internal, err := toInternal(crd)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	internalOld, err := toInternal(old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	prepareCRDForCreate(internalOld)
	// The strategy's PrepareForUpdate: status is the stored one.
	internal.Status = internalOld.Status
	internal.Generation = internalOld.Generation
	return crdvalidation.ValidateCustomResourceDefinitionUpdate(ctx, internal, internalOld)
}

// toInternal defaults a copy of crd as the API server's decoder does and
// converts it to the internal version its validation works on.
func toInternal(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, error) {
	if crd == nil {
		return nil, errors.New("no CustomResourceDefinition")
	}
	v1 := crd.DeepCopy()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(v1)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(v1, internal, nil); err != nil {
		return nil, fmt.Errorf("convert CustomResourceDefinition %s to the internal version: %w", crd.Name, err)
	}
	return internal, nil
}

// prepareCRDForCreate is the CRD strategy's PrepareForCreate: a fresh
// status whose storedVersions name the storage version.
func prepareCRDForCreate(crd *apiextensions.CustomResourceDefinition) {
	crd.Status = apiextensions.CustomResourceDefinitionStatus{}
	crd.Generation = 1
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
			break
		}
	}
}

// ReadCRDs reads the CustomResourceDefinitions in path: a YAML or JSON
// file, or a directory whose *.yaml, *.yml and *.json files are read (not
// recursively), each of them one or more documents separated by "---".
// Documents of another kind are skipped; a CRD that does not decode is an
// error naming its file.
func ReadCRDs(path string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read CustomResourceDefinitions: %w", err)
	}
	files := []string{path}
	if info.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("read CustomResourceDefinitions: %w", err)
		}
		files = files[:0]
		for _, e := range entries {
			switch filepath.Ext(e.Name()) {
			case ".yaml", ".yml", ".json":
				if !e.IsDir() {
					files = append(files, filepath.Join(path, e.Name()))
				}
			}
		}
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		got, err := readCRDFile(f)
		if err != nil {
			return nil, err
		}
		crds = append(crds, got...)
	}
	return crds, nil
}

func readCRDFile(path string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read CustomResourceDefinitions: %w", err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return crds, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if head.Kind != "CustomResourceDefinition" || !strings.HasPrefix(head.APIVersion, apiextensionsv1.GroupName+"/") {
			continue
		}
		if head.APIVersion != apiextensionsv1.SchemeGroupVersion.String() {
			return nil, fmt.Errorf("read %s: CustomResourceDefinition of %s: only %s is supported", path, head.APIVersion, apiextensionsv1.SchemeGroupVersion)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(doc, crd); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		crds = append(crds, crd)
	}
}
