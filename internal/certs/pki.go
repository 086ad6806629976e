package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// DefaultBackdate is how far before "now" a certificate's NotBefore is
// set when [Options.Backdate] is zero, so that a peer whose clock is a
// little behind still accepts it. Times the rotation derives from a
// certificate's NotBefore add it back.
const DefaultBackdate = 5 * time.Minute

// authority is one CA: its certificate and, when it may sign, its key.
type authority struct {
	cert    *x509.Certificate
	key     crypto.Signer // nil for a CA that is only trusted (previous)
	certPEM []byte
	keyPEM  []byte
}

// created is when the CA was made: NotBefore without the backdate.
func (a *authority) created(backdate time.Duration) time.Time { return a.cert.NotBefore.Add(backdate) }

// newAuthority makes a self-signed CA valid for lifetime from now.
func newAuthority(now time.Time, lifetime, backdate time.Duration, commonName string) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          newSerial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(lifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse CA certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode CA key: %w", err)
	}
	return &authority{
		cert:    cert,
		key:     key,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// parseAuthority reads a CA from PEM. keyPEM may be nil for a CA that is
// only trusted. The errors say what is wrong; the caller names the field.
func parseAuthority(certPEM, keyPEM []byte) (*authority, error) {
	cert, err := parseCert(certPEM)
	if err != nil {
		return nil, err
	}
	if !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, errors.New("certificate is not a CA (IsCA and the certSign key usage are required)")
	}
	a := &authority{cert: cert, certPEM: certPEM}
	if keyPEM == nil {
		return a, nil
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, errors.New("key: no PEM block")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("key: %T cannot sign", k)
	}
	pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(cert.PublicKey) {
		return nil, errors.New("key does not match the certificate")
	}
	a.key, a.keyPEM = signer, keyPEM
	return a, nil
}

func parseCert(certPEM []byte) (*x509.Certificate, error) {
	block, rest := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM CERTIFICATE block")
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, errors.New("more than one PEM block")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse certificate: %w", err)
	}
	return cert, nil
}

// leaf is a serving certificate signed in memory, never stored.
type leaf struct {
	tls    *tls.Certificate
	signer *x509.Certificate // the CA that signed it
}

// sign issues a serving certificate for dnsNames (an IP address among
// them goes into the IP SANs), valid from now until
// notAfter (which the caller keeps within the CA's validity).
func (a *authority) sign(now, notAfter time.Time, backdate time.Duration, dnsNames []string) (*leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate serving key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: newSerial(),
		Subject:      pkix.Name{CommonName: dnsNames[0]},
		NotBefore:    now.Add(-backdate),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range dnsNames {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, key.Public(), a.key)
	if err != nil {
		return nil, fmt.Errorf("sign serving certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse serving certificate: %w", err)
	}
	return &leaf{
		tls:    &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert},
		signer: a.cert,
	}, nil
}

func newSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // crypto/rand does not fail on supported platforms
	}
	return n
}
