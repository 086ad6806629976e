package v1alpha1_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dnsv1 "github.com/kopgo/kopgo/examples/dnsrecord/api/v1alpha1"
	"github.com/kopgo/kopgo/status"
)

// A DNSRecord names its zone, name, type, value and the Secret with the
// provider's token; it carries kstatus conditions that kopgo maintains.
func Example() {
	rec := &dnsv1.DNSRecord{
		ObjectMeta: metav1.ObjectMeta{Name: "www", Namespace: "shop", Generation: 1},
		Spec: dnsv1.DNSRecordSpec{
			Zone: "example.com", Name: "www", Type: "A", Value: "192.0.2.10", TTL: 300,
			SecretRef: dnsv1.SecretReference{Name: "dns-credentials"},
		},
	}
	fmt.Println(rec.Spec.FQDN())
	status.MarkReady(rec, "Available", "record rec-1 at the provider")
	fmt.Println(status.IsTrue(rec, status.Ready))
	rec.Spec.Name = "@"
	fmt.Println(rec.Spec.FQDN())
	// Output:
	// www.example.com.
	// true
	// example.com.
}
