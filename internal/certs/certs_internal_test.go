package certs

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestOptionsErrorsNameTheField(t *testing.T) {
	ok := Options{Secret: types.NamespacedName{Namespace: "ns", Name: "ca"}, DNSNames: []string{"svc.ns.svc"}}
	tests := []struct {
		name  string
		edit  func(*Options)
		field string
	}{
		{"no secret name", func(o *Options) { o.Secret.Name = "" }, "Options.Secret"},
		{"no DNS names", func(o *Options) { o.DNSNames = nil }, "Options.DNSNames"},
		{"empty DNS name", func(o *Options) { o.DNSNames = []string{"a", ""} }, "Options.DNSNames[1]"},
		{"fraction 1", func(o *Options) { o.RenewFraction = 1 }, "Options.RenewFraction"},
		{"negative leaf lifetime", func(o *Options) { o.LeafLifetime = -time.Hour }, "Options.LeafLifetime"},
		{"resync not shorter than the trust delay", func(o *Options) { o.Resync, o.TrustDelay = 2*time.Minute, time.Minute }, "Options.Resync"},
		{"CA too short for its leaves", func(o *Options) { o.CALifetime = 10 * 24 * time.Hour }, "Options.CALifetime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := ok
			tt.edit(&o)
			_, err := o.withDefaults()
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("withDefaults() = %v, want an error naming %s", err, tt.field)
			}
		})
	}
	if _, err := ok.withDefaults(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
}

func TestDecodeErrorsNameSecretAndField(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ca, err := newAuthority(now, time.Hour, DefaultBackdate, "t")
	if err != nil {
		t.Fatal(err)
	}
	other, err := newAuthority(now, time.Hour, DefaultBackdate, "t")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		data    map[string][]byte
		field   string
		current bool // a usable current CA remains
	}{
		{"no cert", map[string][]byte{FieldCAKey: ca.keyPEM}, FieldCACert, false},
		{"no key", map[string][]byte{FieldCACert: ca.certPEM}, FieldCAKey, false},
		{"garbage key", map[string][]byte{FieldCACert: ca.certPEM, FieldCAKey: []byte("garbage")}, FieldCAKey, false},
		{"key of another CA", map[string][]byte{FieldCACert: ca.certPEM, FieldCAKey: other.keyPEM}, FieldCAKey, false},
		{"next without key", map[string][]byte{FieldCACert: ca.certPEM, FieldCAKey: ca.keyPEM, FieldNextCert: other.certPEM}, FieldNextKey, true},
		{"garbage previous", map[string][]byte{FieldCACert: ca.certPEM, FieldCAKey: ca.keyPEM, FieldPreviousCert: []byte("x")}, FieldPreviousCert, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ca"}, Data: tt.data}
			st, errs := decode(s)
			if len(errs) != 1 {
				t.Fatalf("decode: %d errors %v, want 1", len(errs), errs)
			}
			msg := errs[0].Error()
			if !strings.Contains(msg, "ns/ca") || !strings.Contains(msg, tt.field) {
				t.Errorf("error %q names neither the Secret ns/ca nor the field %s", msg, tt.field)
			}
			if (st.current != nil) != tt.current {
				t.Errorf("usable current CA: %v, want %v", st.current != nil, tt.current)
			}
		})
	}
}

// TestAdvancePhases walks a CA's rotation with the pure transition: the
// successor is trusted TrustDelay before it signs, and the old CA stays
// trusted a leaf lifetime after that.
func TestAdvancePhases(t *testing.T) {
	o, err := Options{
		Secret: types.NamespacedName{Namespace: "ns", Name: "ca"}, DNSNames: []string{"a"},
		CALifetime: 12 * time.Hour, LeafLifetime: time.Hour, TrustDelay: 10 * time.Minute,
	}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st, changed, made, err := o.advance(state{}, t0)
	if err != nil || !changed || made != 1 {
		t.Fatalf("first advance: changed %v made %d err %v", changed, made, err)
	}
	first := st.current
	phase := func(st state) string {
		switch {
		case st.next != nil:
			return "next"
		case st.previous != nil:
			return "previous"
		}
		return "current"
	}
	steps := []struct {
		at    time.Duration
		phase string
		made  int
	}{
		{7*time.Hour + 59*time.Minute, "current", 0},
		{8 * time.Hour, "next", 1},                    // 2/3 of 12h
		{8*time.Hour + 9*time.Minute, "next", 0},      // not yet trusted long enough
		{8*time.Hour + 10*time.Minute, "previous", 0}, // promoted
		{9*time.Hour + 9*time.Minute, "previous", 0},  // old leaves may live
		{9*time.Hour + 10*time.Minute, "current", 0},  // dropped
	}
	for _, s := range steps {
		st, _, made, err = o.advance(st, t0.Add(s.at))
		if err != nil {
			t.Fatal(err)
		}
		if got := phase(st); got != s.phase || made != s.made {
			t.Errorf("at +%s: phase %s made %d, want %s made %d", s.at, got, made, s.phase, s.made)
		}
	}
	if st.current.cert.Equal(first.cert) {
		t.Errorf("the first CA still signs after the rotation")
	}
	// A leaf signed while the successor waits ends when the old CA is dropped.
	st2, _, _, _ := o.advance(state{current: first}, t0.Add(8*time.Hour))
	end := o.leafNotAfter(st2, t0.Add(8*time.Hour+9*time.Minute))
	if drop := o.promoteAt(st2.next).Add(o.LeafLifetime); end.After(drop) {
		t.Errorf("leaf ends %s, after the old CA is dropped at %s", end, drop)
	}
}
