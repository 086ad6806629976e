// Package manifests reads the examples' generated manifests (config/crd
// and config/rbac/role.yaml, written by controller-gen) from the file
// system each example embeds: one reader for every example's CRDs and RBAC
// functions.
package manifests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// CRDs returns the CustomResourceDefinitions of fsys's config/crd/*.yaml.
func CRDs(fsys fs.FS) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(fsys, "config/crd/*.yaml")
	if err != nil {
		return nil, err
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		err := decodeAll(fsys, f, func(d *utilyaml.YAMLOrJSONDecoder) error {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := d.Decode(&crd); err != nil {
				return err
			}
			crds = append(crds, &crd)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return crds, nil
}

// RBAC returns the operator's ClusterRole and its leader-election Role, as
// fsys's config/rbac/role.yaml defines them.
func RBAC(fsys fs.FS) (*rbacv1.ClusterRole, *rbacv1.Role, error) {
	var cr *rbacv1.ClusterRole
	var r *rbacv1.Role
	err := decodeAll(fsys, "config/rbac/role.yaml", func(d *utilyaml.YAMLOrJSONDecoder) error {
		var doc rbacv1.ClusterRole // a Role has the same fields
		if err := d.Decode(&doc); err != nil {
			return err
		}
		switch doc.Kind {
		case "":
			// an empty document
		case "ClusterRole":
			cr = &doc
		case "Role":
			r = &rbacv1.Role{TypeMeta: doc.TypeMeta, ObjectMeta: doc.ObjectMeta, Rules: doc.Rules}
		default:
			return fmt.Errorf("unexpected kind %q", doc.Kind)
		}
		return nil
	})
	if err == nil && (cr == nil || r == nil) {
		err = errors.New("want one ClusterRole and one Role")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("config/rbac/role.yaml: %w", err)
	}
	return cr, r, nil
}

// decodeAll calls decode once per YAML document of fsys's file name.
func decodeAll(fsys fs.FS, name string, decode func(*utilyaml.YAMLOrJSONDecoder) error) error {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return err
	}
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		if err := decode(d); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
}
