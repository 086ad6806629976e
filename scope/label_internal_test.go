package scope

import (
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// isLabel decides as validation.IsDNS1123Label does, on chosen edges and
// on random strings over the characters that matter.
func TestIsLabelAgreesWithValidation(t *testing.T) {
	cases := []string{
		"", "a", "0", "-", "a-", "-a", "a-b", "a--b", "A", "aB", "a.b", "a_b", "ns1", "kube-system",
		strings.Repeat("a", 63), strings.Repeat("a", 64), "é", "a b",
	}
	r := rand.New(rand.NewPCG(1, 2))
	const chars = "ab09-.A_"
	for range 20000 {
		b := make([]byte, r.IntN(8))
		for i := range b {
			b[i] = chars[r.IntN(len(chars))]
		}
		cases = append(cases, string(b))
	}
	for _, name := range cases {
		want := len(validation.IsDNS1123Label(name)) == 0
		if got := isLabel(name); got != want {
			t.Errorf("isLabel(%q) = %t, IsDNS1123Label says %t", name, got, want)
		}
	}
}
