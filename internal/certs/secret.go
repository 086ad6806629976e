package certs

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// The Secret's fields. ca.crt and ca.key are the CA that signs; next.*
// is its successor while it becomes trusted; previous.crt is its
// predecessor while the certificates it signed may still be served.
const (
	FieldCACert       = "ca.crt"
	FieldCAKey        = "ca.key"
	FieldNextCert     = "next.crt"
	FieldNextKey      = "next.key"
	FieldPreviousCert = "previous.crt"
)

// state is what the Secret holds, parsed.
type state struct {
	current  *authority
	next     *authority // nil outside a rotation's first phase
	previous *authority // nil outside a rotation's second phase
}

// FieldError is a field of the CA Secret that cannot be used. The
// Authority repairs the Secret; the error is logged and counted.
type FieldError struct {
	Secret string // namespace/name
	Field  string
	Err    error
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("CA Secret %s: field %q: %v", e.Secret, e.Field, e.Err)
}

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

// decode parses the Secret's data. An unusable current CA is an error; an
// unusable next or previous CA is dropped with an error (the rotation
// then restarts or ends early) beside a usable state.
func decode(s *corev1.Secret) (state, []error) {
	key := s.Namespace + "/" + s.Name
	ferr := func(field string, err error) error { return &FieldError{Secret: key, Field: field, Err: err} }
	var st state
	var errs []error
	if len(s.Data[FieldCACert]) == 0 {
		return st, []error{ferr(FieldCACert, fmt.Errorf("missing"))}
	}
	if len(s.Data[FieldCAKey]) == 0 {
		return st, []error{ferr(FieldCAKey, fmt.Errorf("missing"))}
	}
	cur, err := parseAuthority(s.Data[FieldCACert], s.Data[FieldCAKey])
	if err != nil {
		return st, []error{ferr(FieldCACert+", "+FieldCAKey, err)}
	}
	st.current = cur
	if c, k := s.Data[FieldNextCert], s.Data[FieldNextKey]; len(c) > 0 || len(k) > 0 {
		if len(k) == 0 {
			errs = append(errs, ferr(FieldNextKey, fmt.Errorf("missing beside %s", FieldNextCert)))
		} else if next, err := parseAuthority(c, k); err != nil {
			errs = append(errs, ferr(FieldNextCert+", "+FieldNextKey, err))
		} else {
			st.next = next
		}
	}
	if c := s.Data[FieldPreviousCert]; len(c) > 0 {
		if prev, err := parseAuthority(c, nil); err != nil {
			errs = append(errs, ferr(FieldPreviousCert, err))
		} else {
			st.previous = prev
		}
	}
	if st.next != nil && st.previous != nil {
		errs = append(errs, ferr(FieldPreviousCert, fmt.Errorf("set beside %s: a rotation has one phase at a time", FieldNextCert)))
		st.previous = nil
	}
	return st, errs
}

// encode is the Secret data for st.
func encode(st state) map[string][]byte {
	d := map[string][]byte{FieldCACert: st.current.certPEM, FieldCAKey: st.current.keyPEM}
	if st.next != nil {
		d[FieldNextCert], d[FieldNextKey] = st.next.certPEM, st.next.keyPEM
	}
	if st.previous != nil {
		d[FieldPreviousCert] = st.previous.certPEM
	}
	return d
}

// bundle is the PEM trust bundle of st: the signing CA first, then the
// one becoming or ceasing to be trusted.
func (st state) bundle() []byte {
	out := append([]byte(nil), st.current.certPEM...)
	if st.next != nil {
		out = append(out, st.next.certPEM...)
	}
	if st.previous != nil {
		out = append(out, st.previous.certPEM...)
	}
	return out
}
