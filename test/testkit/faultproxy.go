package testkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/transport"
)

// FaultProxy is a reverse proxy between one client, typically an operator,
// and the API server that injects faults at configurable rates: 500s, 429s
// with Retry-After, added latency, dropped watch streams, and connection
// resets before the request reached the server or after the server answered
// it (a write whose answer was lost). It can also pause: every request is
// then reset, as if the server were unreachable for this client only.
//
//	p, err := testkit.StartFaultProxy(operatorCfg, testkit.Faults{Error500: 0.05, ResetAfterServer: 0.02})
//	...
//	defer p.Close()
//	... run the operator with p.Config(), or with --kubeconfig written by p.WriteKubeconfig ...
//	t.Logf("fault proxy: %v", p.Stats())
//
// The proxy serves plain HTTP on a free loopback port and authenticates to
// the API server with the credentials of the rest.Config it was started with
// (credentials the client sends are dropped), so the client keeps that
// identity and its RBAC: start it with [Cluster.Config] for an admin, with
// [Cluster.UserConfig] for an operator's own user. Requests stream (watches
// are flushed as events arrive). Protocol upgrades (exec, attach,
// port-forward) are not supported.
//
// A request the proxy cannot forward because the API server is unreachable
// (for instance after [Cluster.StopAPIServer]) has its connection reset, so
// the client sees a network error, as it would without the proxy.
//
// # Why a proxy, and why plain HTTP
//
// A fault injected in the client's transport (a rest.Config WrapTransport)
// cannot lose an answer the server really sent, nor cut a stream at the
// network level, and it only reaches clients built in the test's process.
// Between the client and the server every fault happens on a real
// connection, as a load balancer or a restarting API server causes it, and
// an operator started as a separate process with --kubeconfig meets it too.
//
// Plain HTTP/1.1 towards the client needs no serving certificate, and it
// gives every request in flight a TCP connection of its own, so resetting
// the connection fails that request alone; over TLS client-go would
// negotiate HTTP/2, which multiplexes all requests on one connection, and a
// reset would fail them all. Towards the API server the proxy speaks TLS
// (and HTTP/2) as any client does.
type FaultProxy struct {
	config    *rest.Config
	proxy     *httputil.ReverseProxy
	closeIdle func() // closes the upstream transport's idle connections
	server    *http.Server
	served    chan struct{} // closed when server.Serve returned

	faults atomic.Pointer[faultState]
	paused atomic.Bool
	counts faultCounters

	mu       sync.Mutex
	closed   bool
	nextID   uint64
	inflight map[uint64]context.CancelFunc // cut by Pause and Close
	handlers sync.WaitGroup                // requests being handled
	conns    sync.WaitGroup                // client connections being served

	closeOnce sync.Once
}

// StartFaultProxy starts a proxy to the API server of cfg with the given
// faults, on a free loopback port. Callers must call [FaultProxy.Close].
//
// Upstream, the proxy uses cfg's server, TLS settings and credentials
// (client certificates, bearer tokens, exec plugins, impersonation and
// WrapTransport); its own transport, so that Close can close every upstream
// connection without disturbing other clients of cfg.
func StartFaultProxy(cfg *rest.Config, faults Faults) (*FaultProxy, error) {
	upstream, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("fault proxy: API server URL: %w", err)
	}
	rt, closeIdle, err := upstreamTransport(cfg)
	if err != nil {
		return nil, fmt.Errorf("fault proxy: transport to %s: %w", upstream, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		closeIdle()
		return nil, fmt.Errorf("fault proxy: listen: %w", err)
	}
	p := &FaultProxy{closeIdle: closeIdle, served: make(chan struct{}), inflight: map[uint64]context.CancelFunc{}}
	p.faults.Store(newFaultState(faults))
	p.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(upstream)
			r.Out.Header.Del("Authorization") // the proxy's credentials, never the client's
		},
		Transport:     rt,
		FlushInterval: -1,
		ErrorHandler:  func(w http.ResponseWriter, _ *http.Request, _ error) { resetConn(w) },
		// Cut streams are the point here, not news.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	p.server = &http.Server{
		Handler:           http.HandlerFunc(p.serve),
		ReadHeaderTimeout: time.Minute,
		ConnState: func(_ net.Conn, state http.ConnState) {
			switch state {
			case http.StateNew:
				p.conns.Add(1)
			case http.StateHijacked, http.StateClosed:
				p.conns.Done()
			}
		},
	}

	// The client side: everything of cfg but the server and the credentials.
	p.config = rest.AnonymousClientConfig(cfg)
	p.config.Host = "http://" + l.Addr().String()
	p.config.TLSClientConfig = rest.TLSClientConfig{}
	p.config.Dial, p.config.Proxy = nil, nil

	go func() {
		defer close(p.served)
		_ = p.server.Serve(l) // ends with ErrServerClosed
	}()
	return p, nil
}

// upstreamTransport is an http.RoundTripper with cfg's TLS and credentials,
// not shared with other clients (client-go caches transports by TLS
// settings), and a function that closes its idle connections.
func upstreamTransport(cfg *rest.Config) (http.RoundTripper, func(), error) {
	if cfg.Transport != nil { // the caller's own transport; it manages its connections
		rt, err := rest.TransportFor(cfg)
		return rt, func() {}, err
	}
	tc, err := cfg.TransportConfig()
	if err != nil {
		return nil, nil, err
	}
	tlsConfig, err := transport.TLSConfigFor(tc)
	if err != nil {
		return nil, nil, err
	}
	dial := (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	if cfg.Dial != nil {
		dial = cfg.Dial
	}
	proxy := http.ProxyFromEnvironment
	if cfg.Proxy != nil {
		proxy = cfg.Proxy
	}
	base := utilnet.SetTransportDefaults(&http.Transport{
		Proxy:               proxy,
		TLSClientConfig:     tlsConfig,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 25,
		DialContext:         dial,
		DisableCompression:  cfg.DisableCompression,
	})
	rt, err := transport.HTTPWrappersForConfig(tc, base)
	if err != nil {
		return nil, nil, err
	}
	return rt, base.CloseIdleConnections, nil
}

// Config returns a client configuration that reaches the API server through
// the proxy: no credentials (the proxy adds them), and the client-side
// settings of the config the proxy was started with (QPS, Burst, Timeout,
// UserAgent, content types). Each call returns a new copy.
func (p *FaultProxy) Config() *rest.Config { return rest.CopyConfig(p.config) }

// WriteKubeconfig writes a kubeconfig file for the proxy at path, for an
// operator started as a separate process with --kubeconfig.
func (p *FaultProxy) WriteKubeconfig(path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["faultproxy"] = &clientcmdapi.Cluster{Server: p.config.Host}
	kc.AuthInfos["faultproxy"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["faultproxy"] = &clientcmdapi.Context{Cluster: "faultproxy", AuthInfo: "faultproxy", Namespace: "default"}
	kc.CurrentContext = "faultproxy"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("fault proxy: write kubeconfig %s: %w", path, err)
	}
	return nil
}

// SetFaults replaces the faults, at once for the requests that arrive from
// now on, and seeds the random source afresh with f.Seed. Faults{} forwards
// every request untouched.
func (p *FaultProxy) SetFaults(f Faults) { p.faults.Store(newFaultState(f)) }

// Stats returns what the proxy did since it started.
func (p *FaultProxy) Stats() FaultStats { return p.counts.snapshot() }

// Pause makes the API server unreachable through the proxy: the requests in
// flight are cut (watches end mid-stream, a request not yet answered has its
// connection reset) and every new request has its connection reset, until
// [FaultProxy.Resume]. Other clients of the API server are not disturbed:
// an outage of one process.
func (p *FaultProxy) Pause() {
	p.paused.Store(true)
	p.cutInflight()
}

// Resume ends a [FaultProxy.Pause].
func (p *FaultProxy) Resume() { p.paused.Store(false) }

// Close stops the proxy: it stops listening, cuts every request in flight,
// closes every connection (streaming and hijacked ones too, and the upstream
// ones), and returns when no goroutine of the proxy is left. It is safe to
// call more than once.
func (p *FaultProxy) Close() {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		p.cutInflight()
		_ = p.server.Close() // the listener and every connection not hijacked
		<-p.served
		p.handlers.Wait()
		p.conns.Wait()
		p.closeIdle()
	})
}

func (p *FaultProxy) cutInflight() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, cancel := range p.inflight {
		cancel()
	}
}

// begin registers a request in flight: its context ends when the client
// goes, or when the proxy is paused or closed. False when the proxy is
// closed.
func (p *FaultProxy) begin(r *http.Request) (context.Context, func(), bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, nil, false
	}
	ctx, cancel := context.WithCancel(r.Context())
	id := p.nextID
	p.nextID++
	p.inflight[id] = cancel
	p.handlers.Add(1)
	return ctx, func() {
		cancel()
		p.mu.Lock()
		delete(p.inflight, id)
		p.mu.Unlock()
		p.handlers.Done()
	}, true
}

// serve handles one request from the client: it draws the request's
// faults and forwards it, or not, accordingly.
func (p *FaultProxy) serve(w http.ResponseWriter, r *http.Request) {
	ctx, end, ok := p.begin(r)
	if !ok {
		resetConn(w)
		return
	}
	defer end()
	p.counts.requests.Add(1)
	// After begin: a Pause either sees this request in flight and cuts it,
	// or happened before and is seen here.
	if p.paused.Load() {
		p.counts.paused.Add(1)
		resetConn(w)
		return
	}
	state := p.faults.Load()
	plan := state.plan(r)

	if plan.delay > 0 {
		p.counts.latency.Add(1)
		t := time.NewTimer(plan.delay)
		select {
		case <-t.C:
		case <-ctx.Done(): // the client went, or the proxy was paused or closed
			t.Stop()
			resetConn(w)
			return
		}
	}
	switch plan.fault {
	case resetBeforeServer:
		p.counts.resetBefore.Add(1)
		resetConn(w)
		return
	case tooManyRequests:
		p.counts.tooManyRequests.Add(1)
		seconds := state.retryAfterSeconds()
		w.Header().Set("Retry-After", strconv.Itoa(seconds))
		writeStatus(w, apierrors.NewTooManyRequests("injected by the testkit fault proxy", seconds))
		return
	case error500:
		p.counts.error500.Add(1)
		writeStatus(w, apierrors.NewInternalError(errors.New("injected by the testkit fault proxy")))
		return
	case expireWatch:
		p.counts.expireWatch.Add(1)
		writeStatus(w, apierrors.NewResourceExpired("too old resource version: injected by the testkit fault proxy"))
		return
	}

	if plan.dropAfter > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		t := time.AfterFunc(plan.dropAfter, func() {
			p.counts.dropWatch.Add(1)
			cancel() // the proxy's copy of the stream fails and aborts it
		})
		defer t.Stop()
	}
	r = r.WithContext(ctx)
	p.counts.forwarded.Add(1)
	if plan.fault != resetAfterServer {
		p.proxy.ServeHTTP(w, r)
		return
	}
	lost := &discardWriter{real: w, header: http.Header{}}
	p.proxy.ServeHTTP(lost, r)
	if lost.answered {
		p.counts.resetAfter.Add(1)
	}
	resetConn(w)
}

// writeStatus answers with err's metav1.Status as JSON, as the API server
// does.
func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	status := err.Status()
	status.Kind, status.APIVersion = "Status", "v1"
	body, _ := json.Marshal(status) // a Status always marshals
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(int(status.Code))
	_, _ = w.Write(body)
}

// resetConn resets the client's TCP connection: an RST, not a graceful
// close, so the client sees "connection reset by peer" (or an unexpected
// EOF), never a response.
func resetConn(w http.ResponseWriter) {
	if d, ok := w.(*discardWriter); ok {
		w = d.real
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if errors.Is(err, http.ErrHijacked) {
		return // reset already
	}
	if err != nil {
		panic(http.ErrAbortHandler) // net/http closes the connection without an answer
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0) // close sends RST
	}
	_ = conn.Close()
}

// discardWriter takes the server's answer for ResetAfterServer and drops
// it.
type discardWriter struct {
	real     http.ResponseWriter
	header   http.Header
	answered bool
}

func (d *discardWriter) Header() http.Header         { return d.header }
func (d *discardWriter) WriteHeader(int)             { d.answered = true }
func (d *discardWriter) Write(b []byte) (int, error) { d.answered = true; return len(b), nil }
func (d *discardWriter) Flush()                      {}
