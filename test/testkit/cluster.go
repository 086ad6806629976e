package testkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Options configure a Cluster. The zero value starts a bare control plane
// (etcd and kube-apiserver) with binaries found as described at
// [Options.BinDir].
type Options struct {
	// Full also starts kube-controller-manager (garbage collector, namespace,
	// Deployment, ReplicaSet, StatefulSet, Job and other workload
	// controllers, ClusterRole aggregation, resource quota, the
	// PersistentVolume binder and the storage version migrator), kube-scheduler, kwok with [Options.Nodes]
	// fake nodes and a dynamic volume provisioner, so that a Deployment or a
	// StatefulSet with volume claims really rolls out, deleting an owner
	// cascades, the built-in edit and view roles have their rules and a
	// ResourceQuota's status counts. A test decides what a pod does with
	// [PodOutcomeLabel]. docs/testkit.md in the kopgo repository describes
	// the full cluster: what runs, what kwok fakes and what is absent.
	Full bool

	// Nodes is the number of kwok nodes of a full cluster. Default 2.
	Nodes int

	// CRDPaths are files or directories of CustomResourceDefinition
	// manifests, installed (and waited for) before Start returns, and
	// before a full cluster's controller manager starts, so that its
	// garbage collector knows them at once (it rediscovers resource types
	// only every 30 s; a CRD created later cascades up to 30 s late).
	CRDPaths []string

	// CRDs are CustomResourceDefinitions installed as CRDPaths are.
	CRDs []*apiextensionsv1.CustomResourceDefinition

	// BinDir holds the binaries. Default: $KOPGO_TESTKIT_BIN (`make test`
	// sets it), else the first bin/testkit in the working directory or one
	// of its parents (the layout `make testkit-bin` writes in the kopgo
	// repository).
	BinDir string

	// Scheme is the scheme of [Cluster.Client]. Default: client-go's scheme
	// plus apiextensions/v1.
	Scheme *runtime.Scheme

	// StartTimeout bounds Start. Default 2 minutes.
	StartTimeout time.Duration
}

// Cluster is a running control plane on loopback. Its fields are read-only.
type Cluster struct {
	// Dir is the working directory: certificates, etcd data, component logs
	// (*.log) and the kubeconfig. It is removed by Stop.
	Dir string
	// Kubeconfig is the path of an admin kubeconfig, for kubectl while
	// debugging: KUBECONFIG=<Kubeconfig> kubectl get pods -A.
	Kubeconfig string
	// Config is the admin (system:masters) client configuration.
	Config *rest.Config

	opts      Options
	ca        *authority
	client    client.Client
	reaper    *reaper
	etcd      *process
	apiserver *process
	others    []*process // controller manager, scheduler, kwok, provisioner: stopped first

	mu       sync.Mutex
	cleanups []func() // run by Stop, last first, before any component stops
	stopping bool     // Stop has begun: a new cleanup runs at once
	errs     []error  // of functions started with Go

	stopOnce sync.Once
}

// serviceCIDR is the Services' cluster IP range: a /16, so that a suite
// with thousands of Services (each with a cluster IP) does not run out, as
// it did with a /24 (254 addresses). The API server and the controller
// manager must agree on it.
const serviceCIDR = "10.0.0.0/16"

const (
	etcdGrace = 10 * time.Second
	// kube-apiserver stops listening at once on SIGTERM but then waits up to
	// a minute for open watches to drain before it exits; it keeps no state
	// of its own, so a short grace and SIGKILL lose nothing.
	apiserverGrace = 3 * time.Second
	otherGrace     = 5 * time.Second
)

// Start starts a cluster. On error nothing is left running. Callers must call
// Stop; [Main] does it for a test package.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	if opts.Nodes <= 0 {
		opts.Nodes = 2
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 2 * time.Minute
	}
	if opts.Scheme == nil {
		opts.Scheme = runtime.NewScheme()
		if err := clientgoscheme.AddToScheme(opts.Scheme); err != nil {
			return nil, fmt.Errorf("build scheme: %w", err)
		}
		if err := apiextensionsv1.AddToScheme(opts.Scheme); err != nil {
			return nil, fmt.Errorf("build scheme: %w", err)
		}
	}
	bins, err := findBinaries(opts.BinDir, opts.Full)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	dir, err := os.MkdirTemp("", "kopgo-testkit-")
	if err != nil {
		return nil, fmt.Errorf("create cluster directory: %w", err)
	}
	c := &Cluster{Dir: dir, Kubeconfig: filepath.Join(dir, "kubeconfig"), opts: opts}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if c.reaper, err = startReaper(dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := c.startControlPlane(ctx, bins); err != nil {
		return nil, err
	}
	if c.client, err = client.New(c.Config, client.Options{Scheme: opts.Scheme}); err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	// CRDs before the controller manager: its garbage collector discovers
	// resource types at start and then only every 30 s, so a custom
	// resource installed later cascades its deletion up to 30 s late.
	if len(opts.CRDPaths) > 0 || len(opts.CRDs) > 0 {
		if _, err := envtest.InstallCRDs(c.Config, envtest.CRDInstallOptions{
			Paths: opts.CRDPaths, CRDs: opts.CRDs, ErrorIfPathMissing: true, Scheme: opts.Scheme,
		}); err != nil {
			return nil, fmt.Errorf("install CRDs: %w", err)
		}
	}
	if opts.Full {
		if err := c.startFull(ctx, bins); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// startControlPlane writes the certificates and starts etcd and the API
// server on free loopback ports, retrying with new ports if another process
// took one between choosing it and binding it.
func (c *Cluster) startControlPlane(ctx context.Context, bins binaries) error {
	pki := filepath.Join(c.Dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", pki, err)
	}
	var err error
	if c.ca, err = newAuthority(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(pki, "ca.crt"), c.ca.certPEM, 0o600); err != nil {
		return fmt.Errorf("write CA: %w", err)
	}
	serving, err := c.ca.serving()
	if err != nil {
		return err
	}
	servingCert, servingKey, err := serving.write(pki, "apiserver")
	if err != nil {
		return err
	}
	sa, err := serviceAccountKeys()
	if err != nil {
		return err
	}
	saPub, saKey, err := sa.write(pki, "service-account")
	if err != nil {
		return err
	}
	admin, err := c.ca.client("kopgo-testkit-admin", "system:masters")
	if err != nil {
		return err
	}

	var lastErr error
	for range 3 {
		ports, err := FreePorts(3)
		if err != nil {
			return err
		}
		etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
		peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
		host := "https://127.0.0.1:" + strconv.Itoa(ports[2])
		c.etcd = &process{
			name: "etcd", path: bins.etcd, logPath: filepath.Join(c.Dir, "etcd.log"), reaper: c.reaper,
			args: []string{
				"--name=testkit",
				"--data-dir=" + filepath.Join(c.Dir, "etcd"),
				"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
				"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
				"--initial-cluster=testkit=" + peerURL,
				"--unsafe-no-fsync=true", "--log-level=warn",
			},
		}
		c.apiserver = &process{
			name: "kube-apiserver", path: bins.apiserver, logPath: filepath.Join(c.Dir, "kube-apiserver.log"), reaper: c.reaper,
			args: []string{
				"--etcd-servers=" + etcdURL,
				"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
				"--secure-port=" + strconv.Itoa(ports[2]),
				"--cert-dir=" + pki,
				"--tls-cert-file=" + servingCert, "--tls-private-key-file=" + servingKey,
				"--client-ca-file=" + filepath.Join(pki, "ca.crt"),
				"--service-account-issuer=" + host,
				"--service-account-key-file=" + saPub,
				"--service-account-signing-key-file=" + saKey,
				"--service-cluster-ip-range=" + serviceCIDR,
				"--authorization-mode=RBAC",
				"--allow-privileged=true",
				// Pods need no token volume here, and a bare control plane has no
				// controller that creates the default ServiceAccount.
				"--disable-admission-plugins=ServiceAccount",
				// Production clusters often enforce that setting
				// blockOwnerDeletion needs "update" on the owner's
				// finalizers; operators' RBAC tests should see it too.
				"--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
				// Tests send bursts of requests from one user; fairness queuing
				// only slows them down and its bootstrap slows start-up.
				"--enable-priority-and-fairness=false",
				// The advertised address is loopback, which the default lease
				// reconciler of the "kubernetes" Service endpoints refuses.
				"--endpoint-reconciler-type=none",
			},
		}
		c.Config = &rest.Config{
			Host:            host,
			TLSClientConfig: rest.TLSClientConfig{CAData: c.ca.certPEM, CertData: admin.cert, KeyData: admin.key},
			QPS:             -1, // no client-side rate limit against a private server
		}
		if lastErr = c.startEtcd(ctx); lastErr == nil {
			if lastErr = c.StartAPIServer(ctx); lastErr == nil {
				return c.writeKubeconfig()
			}
		}
		c.apiserver.stop(apiserverGrace)
		c.etcd.stop(etcdGrace)
		if ctx.Err() != nil || !portInUse(c.etcd, c.apiserver) {
			break
		}
		_ = os.RemoveAll(filepath.Join(c.Dir, "etcd"))
	}
	return lastErr
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	if err := c.etcd.start(); err != nil {
		return err
	}
	healthURL := c.etcd.args[2][len("--listen-client-urls="):] + "/health"
	return c.etcd.waitFor(ctx, "etcd /health", func(ctx context.Context) error {
		return httpOK(ctx, http.DefaultClient, healthURL)
	})
}

// StartAPIServer starts the API server again after [Cluster.StopAPIServer],
// on the same port, etcd data and certificates, and waits until it is ready.
// Clients made from [Cluster.Config] before the stop keep working.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	if err := c.apiserver.start(); err != nil {
		return err
	}
	return c.waitReady(ctx)
}

// StopAPIServer stops the API server (SIGTERM, then SIGKILL after 3s) and
// leaves etcd running. Open watches end; clients get connection errors until
// [Cluster.StartAPIServer].
func (c *Cluster) StopAPIServer() {
	c.apiserver.stop(apiserverGrace)
}

// waitReady waits until the API server answers /readyz with 200.
func (c *Cluster) waitReady(ctx context.Context) error {
	hc, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		return fmt.Errorf("http client: %w", err)
	}
	defer hc.CloseIdleConnections()
	return c.apiserver.waitFor(ctx, "kube-apiserver /readyz", func(ctx context.Context) error {
		return httpOK(ctx, hc, c.Config.Host+"/readyz")
	})
}

// Stop stops the cluster, in this order: the functions registered with
// [Cluster.Cleanup] run, last registered first (this ends the functions
// started with [Cluster.Go] and waits for them); then the controller
// manager, the scheduler, kwok and the provisioner stop; then the API
// server; then etcd; and [Cluster.Dir] is removed. So an operator that a
// suite runs against the cluster stops while the API server still answers,
// and logs no errors about a server that went away.
//
// Stop is safe to call more than once and from a deferred call after a
// failed test. If a cleanup function panics, the others still run and the
// cluster still stops; Stop then panics with the first panic's value.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		panicked := c.runCleanups()
		var wg sync.WaitGroup
		for _, p := range c.others {
			wg.Go(func() { p.stop(otherGrace) })
		}
		wg.Wait()
		if c.apiserver != nil {
			c.apiserver.stop(apiserverGrace)
		}
		if c.etcd != nil {
			c.etcd.stop(etcdGrace)
		}
		if c.reaper != nil {
			c.reaper.close()
		}
		_ = os.RemoveAll(c.Dir)
		if panicked != nil {
			panic(panicked)
		}
	})
}

// Client returns an admin client with the cluster's scheme.
func (c *Cluster) Client() client.Client { return c.client }

// Scheme returns the scheme of [Cluster.Client].
func (c *Cluster) Scheme() *runtime.Scheme { return c.opts.Scheme }

// UserConfig returns a client configuration that authenticates as user name
// in the given groups by a client certificate, with no permissions beyond
// what RBAC grants that user: for testing an operator's ClusterRole.
func (c *Cluster) UserConfig(name string, groups ...string) (*rest.Config, error) {
	kp, err := c.ca.client(name, groups...)
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(c.Config)
	cfg.CertData, cfg.KeyData = kp.cert, kp.key
	return cfg, nil
}

func (c *Cluster) writeKubeconfig() error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["testkit"] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthorityData: c.Config.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: c.Config.CertData, ClientKeyData: c.Config.KeyData}
	kc.Contexts["testkit"] = &clientcmdapi.Context{Cluster: "testkit", AuthInfo: "admin", Namespace: "default"}
	kc.CurrentContext = "testkit"
	if err := clientcmd.WriteToFile(*kc, c.Kubeconfig); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

func httpOK(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// FreePorts returns n distinct loopback TCP ports that were free a moment
// ago: for the servers a test starts (an operator's health and metrics
// endpoints). Another process may take one before it is bound; the testkit
// retries its own components on new ports when that happens.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// portInUse reports whether a component failed because its port was taken.
func portInUse(ps ...*process) bool {
	for _, p := range ps {
		if data, err := os.ReadFile(p.logPath); err == nil && containsAny(string(data), "address already in use", "bind: ") {
			return true
		}
	}
	return false
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

var errNoBinaries = errors.New("testkit binaries not found")
