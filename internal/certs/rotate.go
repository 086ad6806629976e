package certs

import (
	"time"
)

// A rotation has three phases, each written in the Secret so that every
// replica takes the same decisions from the Secret and the clock alone:
//
//  1. current only. At renewAt(current) a successor is made: next.
//  2. current and next, both in the bundle; current signs. At
//     next.created() + TrustDelay next becomes current, the old current
//     previous (its key dropped).
//  3. current and previous, both in the bundle; current signs. At
//     current.created() + TrustDelay + LeafLifetime every certificate
//     previous signed has expired, and previous is dropped: phase 1.
//
// A CA that has expired (the operator was down too long) cannot be
// rotated without downtime: it is replaced at once by next if there is
// one, by a new CA otherwise.

// renewAt is when a certificate valid from issued to notAfter is replaced.
func renewAt(issued, notAfter time.Time, fraction float64) time.Time {
	return issued.Add(time.Duration(float64(notAfter.Sub(issued)) * fraction))
}

// promoteAt is when next becomes current.
func (o Options) promoteAt(next *authority) time.Time {
	return next.created(o.Backdate).Add(o.TrustDelay)
}

// dropAt is when previous leaves the bundle, for a current promoted at
// promoteAt(current).
func (o Options) dropAt(st state) time.Time {
	at := o.promoteAt(st.current).Add(o.LeafLifetime)
	if st.previous.cert.NotAfter.Before(at) {
		return st.previous.cert.NotAfter
	}
	return at
}

// advance moves st to what it must be at now, making CAs as needed. It
// reports whether st changed, so the Secret must be written, and how
// many CAs it made.
func (o Options) advance(st state, now time.Time) (_ state, changed bool, made int, _ error) {
	if st.current == nil || !now.Before(st.current.cert.NotAfter) {
		if st.current != nil && st.next != nil && now.Before(st.next.cert.NotAfter) {
			st = state{current: st.next}
		} else {
			ca, err := newAuthority(now, o.CALifetime, o.Backdate, o.CommonName)
			if err != nil {
				return st, false, 0, err
			}
			st = state{current: ca}
			made++
		}
		changed = true
	}
	if st.next != nil && !now.Before(o.promoteAt(st.next)) {
		old := *st.current
		old.key, old.keyPEM = nil, nil
		st = state{current: st.next, previous: &old}
		changed = true
	}
	if st.previous != nil && !now.Before(o.dropAt(st)) {
		st.previous = nil
		changed = true
	}
	if st.next == nil && st.previous == nil && !now.Before(renewAt(st.current.created(o.Backdate), st.current.cert.NotAfter, o.RenewFraction)) {
		next, err := newAuthority(now, o.CALifetime, o.Backdate, o.CommonName)
		if err != nil {
			return st, false, 0, err
		}
		st.next = next
		made++
		changed = true
	}
	return st, changed, made, nil
}

// leafNotAfter is the end of a serving certificate signed at now: a leaf
// lifetime, cut so that it ends no later than its CA, nor after the
// previous CA is dropped should a rotation be pending.
func (o Options) leafNotAfter(st state, now time.Time) time.Time {
	end := now.Add(o.LeafLifetime)
	if ca := st.current.cert.NotAfter; ca.Before(end) {
		end = ca
	}
	if st.next != nil {
		if cap := o.promoteAt(st.next).Add(o.LeafLifetime); cap.Before(end) {
			end = cap
		}
	}
	return end
}

// needsLeaf reports whether l must be replaced at now: none yet, signed
// by a CA that no longer signs, or past its renewal time.
func (o Options) needsLeaf(l *leaf, st state, now time.Time) bool {
	if l == nil || !l.signer.Equal(st.current.cert) {
		return true
	}
	c := l.tls.Leaf
	return !now.Before(renewAt(c.NotBefore.Add(o.Backdate), c.NotAfter, o.RenewFraction))
}

// wakeAt is the next time something in st or l is due, at most Resync
// after now.
func (o Options) wakeAt(st state, l *leaf, now time.Time) time.Time {
	at := now.Add(o.Resync)
	earlier := func(t time.Time) {
		if t.Before(at) {
			at = t
		}
	}
	earlier(st.current.cert.NotAfter)
	switch {
	case st.next != nil:
		earlier(o.promoteAt(st.next))
	case st.previous != nil:
		earlier(o.dropAt(st))
	default:
		earlier(renewAt(st.current.created(o.Backdate), st.current.cert.NotAfter, o.RenewFraction))
	}
	if l != nil {
		c := l.tls.Leaf
		earlier(renewAt(c.NotBefore.Add(o.Backdate), c.NotAfter, o.RenewFraction))
	}
	return at
}
