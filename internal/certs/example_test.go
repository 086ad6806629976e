package certs_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopgo/kopgo/internal/certs"
)

// An operator serves HTTPS with a certificate its Authority keeps, and a
// client trusts the bundle the Authority publishes. The cluster is
// testkit's; an operator passes a client that reads through the API
// server.
func Example() {
	ctx := context.Background()
	var caBundle []byte
	a, err := certs.New(cluster.Client(), certs.Options{
		Secret:   types.NamespacedName{Namespace: "default", Name: "example-webhook-ca"},
		DNSNames: []string{"example-webhook.default.svc"},
		OnBundle: func(_ context.Context, b []byte) error {
			caBundle = b // an operator writes it into its webhook configurations
			return nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := a.Sync(ctx); err != nil { // or mgr.Add(a): Start syncs when due
		fmt.Println(err)
		return
	}
	defer func() {
		_ = cluster.Client().Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "example-webhook-ca"}})
	}()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := &http.Server{
		Handler:   http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = fmt.Fprint(w, "admitted") }),
		TLSConfig: a.TLSConfig(),
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	defer func() { _ = srv.Close() }()

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caBundle)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, ServerName: "example-webhook.default.svc", MinVersion: tls.VersionTLS12,
	}}}
	resp, err := c.Get("https://" + ln.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	fmt.Println(resp.Status, "CAs trusted:", pemCount(caBundle))
	// Output: 200 OK CAs trusted: 1
}
