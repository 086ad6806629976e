// Package names checks Kubernetes names and label parts as
// k8s.io/apimachinery/pkg/util/validation does, without its regular
// expressions, for checks that run on every reconcile (a child's
// namespace, the owner label Sync puts on every child). Each function
// answers only yes or no; a caller that gets no asks validation for the
// messages. TestAgreesWithValidation holds them to validation's verdicts.
package names

// Length limits, as validation's.
const (
	labelMax     = 63  // a DNS-1123 label, a label value, a qualified name's name part
	subdomainMax = 253 // a DNS-1123 subdomain, a qualified name's prefix
)

func lowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func alnum(c byte) bool { return lowerAlnum(c) || c >= 'A' && c <= 'Z' }

// DNS1123Label reports whether s is a DNS-1123 label (validation.IsDNS1123Label),
// such as a namespace's name.
func DNS1123Label(s string) bool {
	if s == "" || len(s) > labelMax {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !lowerAlnum(c) && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}

// dns1123Subdomain reports whether s is a DNS-1123 subdomain
// (validation.IsDNS1123Subdomain): labels of lower-case alphanumerics and
// '-' joined by '.'.
func dns1123Subdomain(s string) bool {
	if s == "" || len(s) > subdomainMax {
		return false
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			if c := s[i]; !lowerAlnum(c) && c != '-' {
				return false
			}
			continue
		}
		if i == start || !lowerAlnum(s[start]) || !lowerAlnum(s[i-1]) {
			return false // an empty label, or one that starts or ends with '-'
		}
		start = i + 1
	}
	return true
}

// nameOrValue reports whether s is alphanumerics, '-', '_' and '.',
// beginning and ending with an alphanumeric, of at most 63 characters: a
// label value when not empty, a qualified name's name part.
func nameOrValue(s string) bool {
	if s == "" || len(s) > labelMax || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// LabelValue reports whether s is a valid label value
// (validation.IsValidLabelValue); the empty value is one.
func LabelValue(s string) bool { return s == "" || nameOrValue(s) }

// QualifiedName reports whether s is a qualified name
// (validation.IsQualifiedName), such as a label key: a name, optionally
// after a DNS-1123 subdomain prefix and '/'.
func QualifiedName(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return dns1123Subdomain(s[:i]) && nameOrValue(s[i+1:])
		}
	}
	return nameOrValue(s)
}
