package errors_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kjson "sigs.k8s.io/json"
)

// The errors in this file come from the code that really returns them: a
// refused dial, a reset connection, a TLS server nobody trusts, a decoder
// given bad input. Their shape (wrapping, types) is what KindOf must handle,
// so they are not rebuilt by hand.

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// serve accepts connections on loopback and hands each to handle.
func serve(t *testing.T, handle func(*net.TCPConn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			handle(c.(*net.TCPConn))
		}
	}()
	return l.Addr().String()
}

func mustFail(t *testing.T, what string, err error) error {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	return err
}

func dialRefused(t *testing.T) error {
	t.Helper()
	_, err := net.Dial("tcp", closedAddr(t))
	return mustFail(t, "dial a closed port", err)
}

func httpRefused(t *testing.T) error {
	t.Helper()
	resp, err := http.Get("http://" + closedAddr(t))
	if err == nil {
		_ = resp.Body.Close()
	}
	return mustFail(t, "GET from a closed port", err)
}

// connectionReset reads from a connection the server aborts with an RST.
func connectionReset(t *testing.T) error {
	t.Helper()
	addr := serve(t, func(c *net.TCPConn) {
		_ = c.SetLinger(0) // close sends RST instead of FIN
		_ = c.Close()
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err // the RST can arrive while connecting: reset all the same
	}
	defer func() { _ = c.Close() }()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = c.Read(make([]byte, 1))
	return mustFail(t, "read from a reset connection", err)
}

// httpEOF asks a server that reads the request and closes the connection
// without answering, as an API server does when it stops mid-request.
func httpEOF(t *testing.T) error {
	t.Helper()
	addr := serve(t, func(c *net.TCPConn) {
		_, _ = http.ReadRequest(bufio.NewReader(c))
		_ = c.Close()
	})
	resp, err := http.Get("http://" + addr)
	if err == nil {
		_ = resp.Body.Close()
	}
	return mustFail(t, "GET from a server that hangs up", err)
}

func untrustedTLS(t *testing.T) error {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshake is expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL)
	if err == nil {
		_ = resp.Body.Close()
	}
	return mustFail(t, "GET from an untrusted TLS server", err)
}

func readDeadline(t *testing.T) error {
	t.Helper()
	addr := serve(t, func(c *net.TCPConn) {
		go func() { // hold the connection open until the client closes it
			_, _ = io.Copy(io.Discard, c)
			_ = c.Close()
		}()
	})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_ = c.SetReadDeadline(time.Now().Add(-time.Second))
	_, err = c.Read(make([]byte, 1))
	return mustFail(t, "read past the deadline", err)
}

func contextDeadline(t *testing.T) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	return mustFail(t, "context deadline", ctx.Err())
}

func missingFile(t *testing.T) error {
	t.Helper()
	_, err := os.Open(filepath.Join(t.TempDir(), "missing"))
	return mustFail(t, "open a missing file", err)
}

func renameMissing(t *testing.T) error {
	t.Helper()
	dir := t.TempDir()
	return mustFail(t, "rename a missing file", os.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "b")))
}

func jsonSyntax(t *testing.T) error {
	t.Helper()
	var v map[string]any
	return mustFail(t, "json syntax", json.Unmarshal([]byte("{"), &v))
}

func jsonType(t *testing.T) error {
	t.Helper()
	var n int
	return mustFail(t, "json type", json.Unmarshal([]byte(`"x"`), &n))
}

// kjsonSyntax is apimachinery's decoder's own syntax error type.
func kjsonSyntax(t *testing.T) error {
	t.Helper()
	var v map[string]any
	return mustFail(t, "sigs.k8s.io/json syntax", kjson.UnmarshalCaseSensitivePreserveInts([]byte("{"), &v))
}

func notRegistered(t *testing.T) error {
	t.Helper()
	_, _, err := runtime.NewScheme().ObjectKinds(&corev1.ConfigMap{})
	return mustFail(t, "kinds of an unregistered type", err)
}

func missingKind(t *testing.T) error {
	t.Helper()
	_, _, err := unstructured.UnstructuredJSONScheme.Decode([]byte(`{"apiVersion":"v1"}`), nil, nil)
	return mustFail(t, "decode without kind", err)
}

func unknownKind(t *testing.T) error {
	t.Helper()
	_, err := apimeta.NewDefaultRESTMapper(nil).RESTMapping(schema.GroupKind{Group: "example.com", Kind: "Widget"}, "v1")
	return mustFail(t, "mapping of an unknown kind", err)
}

func unknownResource(t *testing.T) error {
	t.Helper()
	_, err := apimeta.NewDefaultRESTMapper(nil).KindFor(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"})
	return mustFail(t, "kind of an unknown resource", err)
}

func notInCluster(t *testing.T) error {
	t.Helper()
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, err := rest.InClusterConfig()
	return mustFail(t, "in-cluster config outside a cluster", err)
}

func emptyKubeconfig(t *testing.T) error {
	t.Helper()
	_, err := clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(), nil).ClientConfig()
	return mustFail(t, "empty kubeconfig", err)
}

func missingContext(t *testing.T) error {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443"}
	cfg.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c"}
	cfg.CurrentContext = "ctx"
	_, err := clientcmd.NewNonInteractiveClientConfig(*cfg, "nope", nil, nil).ClientConfig()
	return mustFail(t, "kubeconfig with a missing context", err)
}

func truncatedStream(t *testing.T) error {
	t.Helper()
	_, err := io.ReadFull(io.LimitReader(zeros{}, 1), make([]byte, 2))
	return mustFail(t, "read a cut stream", err)
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
