package controller

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	koperrors "github.com/kopgo/kopgo/errors"
	kopmeta "github.com/kopgo/kopgo/meta"
)

// probeServer serves /healthz and /readyz. It answers 503 Service
// Unavailable while not ready, as load balancers and Kubernetes expect (the
// manager's own probe server answers 500), and runs on standby replicas too.
type probeServer struct {
	addr  string
	ready func(*http.Request) error
}

// NeedLeaderElection reports false: a standby replica is alive and ready.
func (p *probeServer) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (p *probeServer) Start(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := p.ready(r); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return koperrors.WrapKind(koperrors.Config, err, "listen for probes on "+p.addr, kopmeta.ObjectRef{})
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}

// readiness is ready once the manager's caches synced, and while the API
// server answers (a controller cut off from it is not doing its job).
func readiness(mgr manager.Manager) func(*http.Request) error {
	hc, err := rest.HTTPClientFor(mgr.GetConfig())
	host := mgr.GetConfig().Host
	return func(req *http.Request) error {
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(req.Context(), 2*time.Second)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return fmt.Errorf("caches not synced")
		}
		r, rerr := http.NewRequestWithContext(ctx, http.MethodGet, host+"/readyz", nil)
		if rerr != nil {
			return rerr
		}
		resp, rerr := hc.Do(r)
		if rerr != nil {
			return fmt.Errorf("API server unreachable: %w", rerr)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("API server not ready: %s", resp.Status)
		}
		return nil
	}
}

// addr turns a port into a bind address: -1 is off ("0" to
// controller-runtime), 0 picks a free port.
func addr(port int) string {
	if port < 0 {
		return "0"
	}
	return net.JoinHostPort("", strconv.Itoa(port))
}
