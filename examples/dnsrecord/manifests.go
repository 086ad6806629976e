package dnsrecord

import (
	"embed"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/kopgo/kopgo/examples/internal/manifests"
)

//go:embed config/crd/*.yaml config/rbac/role.yaml
var files embed.FS

// CRDs returns the DNSRecord CustomResourceDefinition of config/crd.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) { return manifests.CRDs(files) }

// RBAC returns the operator's ClusterRole and its leader-election Role, as
// config/rbac/role.yaml defines them.
func RBAC() (*rbacv1.ClusterRole, *rbacv1.Role, error) { return manifests.RBAC(files) }
