package names

import (
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Each check decides as validation does, on chosen edges and on random
// strings over the characters that matter.
func TestAgreesWithValidation(t *testing.T) {
	cases := []string{
		"", "a", "A", "0", "-", "_", ".", "/", "a/", "/a", "a/b", "a.b/c", "a..b/c", "-a/b", "a-/b", "A/b", "a/-b",
		"a/b/c", "example.com/webapp", "sync.kopgo.dev/widget", "kubernetes.io/name", "a_b", "a-b", "a.b", "a--b",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 253) + "/b", strings.Repeat("a", 254) + "/b",
		strings.Repeat("a.", 126) + "a/b", "é", "a b",
	}
	r := rand.New(rand.NewPCG(3, 4))
	const chars = "aZ09-._/"
	for range 50000 {
		b := make([]byte, r.IntN(9))
		for i := range b {
			b[i] = chars[r.IntN(len(chars))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := DNS1123Label(s), len(validation.IsDNS1123Label(s)) == 0; got != want {
			t.Errorf("DNS1123Label(%q) = %t, validation says %t", s, got, want)
		}
		if got, want := LabelValue(s), len(validation.IsValidLabelValue(s)) == 0; got != want {
			t.Errorf("LabelValue(%q) = %t, validation says %t", s, got, want)
		}
		if got, want := QualifiedName(s), len(validation.IsQualifiedName(s)) == 0; got != want {
			t.Errorf("QualifiedName(%q) = %t, validation says %t", s, got, want)
		}
	}
}
