// Package operator is the DNSRecord operator: it keeps each DNSRecord's
// record at an external DNS provider (package provider's HTTP API) with
// kopgo's external package.
package operator
