package provider

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// Record is a DNS record as the provider stores and answers it.
type Record struct {
	// ID is assigned by the provider at creation, never reused.
	ID string `json:"id"`
	// Zone is the DNS zone, e.g. "example.com".
	Zone string `json:"zone"`
	// Name is the record's name relative to the zone, e.g. "www", or "@"
	// for the zone's apex.
	Name string `json:"name"`
	// Type is A, AAAA, CNAME or TXT.
	Type string `json:"type"`
	// Value is an IPv4 address (A), an IPv6 address (AAAA), a host name
	// (CNAME) or text (TXT).
	Value string `json:"value"`
	// TTL is the time to live in seconds, 1 to 86400.
	TTL int32 `json:"ttl"`
	// Tag is the client's owner or idempotency key, searchable with
	// GET /v1/records?tag=.
	Tag string `json:"tag,omitempty"`
}

// Limits of a record's fields.
const (
	maxTTL      = 86400
	maxTXT      = 1024
	maxTagBytes = 253
)

// Validate returns why r cannot be stored, or nil: the provider answers
// such a record 400 with this message. It names the field, e.g.
// "ttl: 0 is not within 1-86400".
func (r *Record) Validate() error {
	if err := validHostname(r.Zone); err != nil {
		return fmt.Errorf("zone: %w", err)
	}
	if r.Name != "@" {
		if err := validHostname(r.Name); err != nil {
			return fmt.Errorf("name: %w", err)
		}
	}
	if r.TTL < 1 || r.TTL > maxTTL {
		return fmt.Errorf("ttl: %d is not within 1-%d", r.TTL, maxTTL)
	}
	if len(r.Tag) > maxTagBytes {
		return fmt.Errorf("tag: longer than %d bytes", maxTagBytes)
	}
	switch r.Type {
	case "A":
		if a, err := netip.ParseAddr(r.Value); err != nil || !a.Is4() {
			return fmt.Errorf("value: %q is not an IPv4 address", r.Value)
		}
	case "AAAA":
		if a, err := netip.ParseAddr(r.Value); err != nil || !a.Is6() || a.Is4In6() {
			return fmt.Errorf("value: %q is not an IPv6 address", r.Value)
		}
	case "CNAME":
		if err := validHostname(strings.TrimSuffix(r.Value, ".")); err != nil {
			return fmt.Errorf("value: %w", err)
		}
	case "TXT":
		if r.Value == "" || len(r.Value) > maxTXT || !utf8.ValidString(r.Value) {
			return fmt.Errorf("value: TXT must be 1-%d bytes of UTF-8", maxTXT)
		}
	default:
		return fmt.Errorf("type: %q is not one of A, AAAA, CNAME, TXT", r.Type)
	}
	return nil
}

// validHostname checks s as dot-separated labels of letters, digits,
// hyphens and underscores (as in "_acme-challenge"), 1-63 bytes each, at
// most 253 in all.
func validHostname(s string) error {
	if s == "" || len(s) > 253 {
		return fmt.Errorf("%q is not a host name of 1-253 characters", s)
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("%q is not a host name: bad label %q", s, label)
		}
		for _, c := range label {
			if !labelChar(c) {
				return fmt.Errorf("%q is not a host name: bad character %q", s, c)
			}
		}
	}
	return nil
}

func labelChar(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}
