package meta

import (
	"strconv"

	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
)

// NameRule is the format a kind requires of metadata.name. The API server
// picks the rule per kind; the Builder cannot know the kind of the object
// its metadata ends up on, so the caller says (see [Builder.NameRule]).
//
// A generateName prefix follows the same rule, checked as the API server
// checks it: as a prefix, where a trailing '-' is allowed.
type NameRule uint8

const (
	// DNS1123Subdomain allows lower-case alphanumerics, '-' and '.', starting
	// and ending with an alphanumeric, at most 253 characters. It is the
	// default, and the rule for most kinds: ConfigMap, Secret, Deployment,
	// custom resources.
	DNS1123Subdomain NameRule = iota
	// DNS1123Label allows lower-case alphanumerics and '-', starting and
	// ending with an alphanumeric, at most 63 characters: Namespace, and
	// names that become DNS labels or label values.
	DNS1123Label
	// DNS1035Label is a DNS-1123 label that starts with a letter: Service.
	DNS1035Label
	// PathSegmentName allows anything but "." and "..", without '/' or '%':
	// the RBAC kinds (Role, ClusterRole, RoleBinding, ClusterRoleBinding),
	// whose names are often like "example.com:manager".
	PathSegmentName
)

// String returns the rule's name.
func (r NameRule) String() string {
	switch r {
	case DNS1123Subdomain:
		return "DNS1123Subdomain"
	case DNS1123Label:
		return "DNS1123Label"
	case DNS1035Label:
		return "DNS1035Label"
	case PathSegmentName:
		return "PathSegmentName"
	}
	return "NameRule(" + strconv.Itoa(int(r)) + ")"
}

// check returns what is wrong with name under the rule; prefix is true for a
// generateName prefix. These are the functions the API server's validation
// uses.
func (r NameRule) check(name string, prefix bool) []string {
	switch r {
	case DNS1123Label:
		return apivalidation.NameIsDNSLabel(name, prefix)
	case DNS1035Label:
		return apivalidation.NameIsDNS1035Label(name, prefix)
	case PathSegmentName:
		// The RBAC validation checks a generateName prefix as a whole name,
		// so "." and ".." are refused there too.
		return content.IsPathSegmentName(name)
	case DNS1123Subdomain:
		return apivalidation.NameIsDNSSubdomain(name, prefix)
	}
	return []string{"cannot be checked: unknown name rule " + r.String()}
}
