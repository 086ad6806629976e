package testkit

import (
	"regexp"
	"strings"
	"testing"
)

func TestNamespaceName(t *testing.T) {
	label := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	for _, in := range []string{
		"TestX", "TestA/sub_case#01", "Test/ümlaut/..", "/", strings.Repeat("TestLong", 20),
	} {
		got := namespaceName(in)
		if len(got) > 63 || !label.MatchString(got) {
			t.Errorf("namespaceName(%q) = %q: not a DNS-1123 label", in, got)
		}
	}
	if a, b := namespaceName("TestX"), namespaceName("TestX"); !strings.HasPrefix(a, "testx-") || a == b && namespaceName("TestX") == a {
		t.Errorf("namespaceName(TestX) = %q, %q: want prefix testx- and a random suffix", a, b)
	}
}
