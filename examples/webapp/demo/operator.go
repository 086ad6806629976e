package demo

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopgo/kopgo/examples/webapp/operator"
	"github.com/kopgo/kopgo/test/testkit"
)

// Operator is the WebApp operator running in this process, as the demo and
// the end-to-end test run it: with leader election, health and metrics on
// free loopback ports.
type Operator struct {
	// HealthAddr and MetricsAddr are the host:port of /readyz and /metrics.
	HealthAddr, MetricsAddr string
	name                    string
	cancel                  context.CancelFunc
	done                    chan error
	stop                    sync.Once
	err                     error // what Run returned
}

// StartOperator runs the operator named name ("webapp" if empty) with cfg's
// identity and waits until it is ready: its caches synced and the API server
// answering (its /readyz). Names must differ within a process, as
// controller-runtime's controller names do.
func StartOperator(ctx context.Context, cfg *rest.Config, name string) (*Operator, error) {
	if name == "" {
		name = "webapp"
	}
	ports, err := testkit.FreePorts(2)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	o := &Operator{
		HealthAddr:  net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])),
		MetricsAddr: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1])),
		name:        name,
		cancel:      cancel,
		done:        make(chan error, 1),
	}
	b := operator.New(operator.Options{
		Name: name, Config: cfg, Namespace: OperatorNamespace, LeaderElection: true,
		HealthPort: ports[0], MetricsPort: ports[1],
	})
	go func() { o.done <- b.Run(ctx) }()

	deadline := time.Now().Add(StepTimeout)
	for {
		select {
		case err := <-o.done:
			cancel()
			return nil, fmt.Errorf("operator stopped before it was ready: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
		if ready(ctx, "http://"+o.HealthAddr+"/readyz") {
			return o, nil
		}
		if time.Now().After(deadline) {
			return nil, errors.Join(errors.New("operator not ready within "+StepTimeout.String()), o.Stop())
		}
	}
}

// Stop ends the operator (as SIGTERM would), waits for it to return and
// returns Run's error. Later calls return the same.
func (o *Operator) Stop() error {
	o.stop.Do(func() {
		o.cancel()
		o.err = <-o.done
	})
	return o.err
}

// Reconciles reads kopgo_reconcile_total from the operator's /metrics: the
// number of its reconciles by result ("success", "error", "requeue", ...).
// The endpoint is HTTPS with a self-signed certificate and answers only a
// bearer token allowed to GET /metrics ([MetricsToken]).
func (o *Operator) Reconciles(ctx context.Context, token string) (map[string]int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+o.MetricsAddr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the metrics server's certificate is self-signed
	}}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET https://%s/metrics: %s", o.MetricsAddr, resp.Status)
	}
	counts := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "kopgo_reconcile_total{") || !strings.Contains(line, `controller="`+o.name+`"`) {
			continue
		}
		_, rest, _ := strings.Cut(line, `result="`)
		result, rest, _ := strings.Cut(rest, `"`)
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return nil, fmt.Errorf("parse %q: %w", line, err)
		}
		counts[result] += int(v)
	}
	return counts, sc.Err()
}

func ready(ctx context.Context, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
