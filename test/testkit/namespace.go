package testkit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Namespace creates a fresh namespace for the test, named after it, and
// deletes it when the test ends. In a full cluster the namespace controller
// then removes everything in it; in a bare control plane the namespace stays
// Terminating, which no later test notices because every name is new.
func (c *Cluster) Namespace(tb testing.TB) string {
	tb.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaceName(tb.Name())}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.client.Create(ctx, ns); err != nil {
		tb.Fatalf("create namespace %s: %v", ns.Name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.client.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
			tb.Errorf("delete namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// namespaceName turns a test name into a DNS-1123 label with a random suffix.
func namespaceName(testName string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			if s := b.String(); s != "" && !strings.HasSuffix(s, "-") {
				b.WriteByte('-')
			}
		}
	}
	base := strings.Trim(b.String(), "-")
	if len(base) > 50 {
		base = strings.Trim(base[:50], "-")
	}
	if base == "" {
		base = "test"
	}
	return fmt.Sprintf("%s-%05d", base, rand.IntN(100000))
}
