package dnsrecord_test

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kopgo/kopgo/examples/dnsrecord"
	dnsv1 "github.com/kopgo/kopgo/examples/dnsrecord/api/v1alpha1"
	"github.com/kopgo/kopgo/test/testkit"
)

var cluster *testkit.Cluster

func TestMain(m *testing.M) {
	crds, err := dnsrecord.CRDs()
	if err != nil {
		panic(err)
	}
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(dnsv1.AddToScheme(s))
	testkit.Main(m, testkit.Options{CRDs: crds, Scheme: s}, func(c *testkit.Cluster) { cluster = c })
}

// The API server, with the generated CRD, refuses what the schema can
// express and defaults the TTL.
func TestCRDValidation(t *testing.T) {
	valid := dnsv1.DNSRecordSpec{Zone: "example.com", Name: "www", Type: "A", Value: "192.0.2.1", SecretRef: dnsv1.SecretReference{Name: "creds"}}
	for _, tc := range []struct {
		name    string
		edit    func(*dnsv1.DNSRecordSpec)
		wantErr string // "" for accepted
		wantTTL int32
	}{
		{name: "valid, TTL defaulted", edit: func(*dnsv1.DNSRecordSpec) {}, wantTTL: 300},
		{name: "the apex, TXT", edit: func(s *dnsv1.DNSRecordSpec) { s.Name, s.Type, s.Value, s.TTL = "@", "TXT", "v=spf1 -all", 60 }, wantTTL: 60},
		{name: "an ACME challenge name", edit: func(s *dnsv1.DNSRecordSpec) { s.Name, s.Type = "_acme-challenge.www", "TXT" }, wantTTL: 300},
		{name: "an unknown type", edit: func(s *dnsv1.DNSRecordSpec) { s.Type = "MX" }, wantErr: "spec.type: Unsupported value"},
		{name: "a name with a space", edit: func(s *dnsv1.DNSRecordSpec) { s.Name = "a b" }, wantErr: "spec.name: Invalid value"},
		{name: "a zone ending in a dot", edit: func(s *dnsv1.DNSRecordSpec) { s.Zone = "example.com." }, wantErr: "spec.zone: Invalid value"},
		{name: "a TTL over a day", edit: func(s *dnsv1.DNSRecordSpec) { s.TTL = 86401 }, wantErr: "spec.ttl: Invalid value"},
		{name: "a negative TTL", edit: func(s *dnsv1.DNSRecordSpec) { s.TTL = -1 }, wantErr: "spec.ttl: Invalid value"},
		{name: "no value", edit: func(s *dnsv1.DNSRecordSpec) { s.Value = "" }, wantErr: "spec.value: Invalid value"},
		{name: "no Secret", edit: func(s *dnsv1.DNSRecordSpec) { s.SecretRef.Name = "" }, wantErr: "spec.secretRef.name: Invalid value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &dnsv1.DNSRecord{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: cluster.Namespace(t)}, Spec: valid}
			tc.edit(&rec.Spec)
			err := cluster.Client().Create(t.Context(), rec)
			if tc.wantErr != "" {
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("create = %v, want Invalid with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rec.Spec.TTL != tc.wantTTL {
				t.Errorf("ttl = %d, want %d", rec.Spec.TTL, tc.wantTTL)
			}
		})
	}
}
