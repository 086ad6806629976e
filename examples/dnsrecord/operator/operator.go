package operator

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kopcontroller "github.com/kopgo/kopgo/controller"
	koperrors "github.com/kopgo/kopgo/errors"
	v1 "github.com/kopgo/kopgo/examples/dnsrecord/api/v1alpha1"
	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/reconciler"
)

// Options configure the operator.
type Options struct {
	// ProviderURL is the provider's base URL, e.g. "http://127.0.0.1:8053".
	// It comes from the operator's configuration, never from a DNSRecord:
	// whoever may create DNSRecords may not point the operator elsewhere.
	ProviderURL string
	// Period is how often each record is checked for drift; 0: the
	// external package's default (5 minutes).
	Period time.Duration
	// Name is the controller's name; "" is "dnsrecord". Two controllers in
	// one process need two names.
	Name string
}

// Scheme returns a scheme with client-go's types and DNSRecord.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(s), v1.AddToScheme(s)); err != nil {
		panic(err) // static registrations: cannot fail
	}
	return s
}

// Builder returns the operator's controller Builder: DNSRecords kept at
// the provider by external.New, and reconciled again when the Secret they
// name changes. Add the Builder's own options (Config, HealthPort,
// MetricsPort, LeaderElection, LabelSelector) and call Run or Setup.
func Builder(o Options) *kopcontroller.Builder[*v1.DNSRecord] {
	name := o.Name
	if name == "" {
		name = "dnsrecord"
	}
	var opts []external.Option
	if o.Period > 0 {
		opts = append(opts, external.WithPeriod(o.Period))
	}
	connect := func(ctx context.Context, r *v1.DNSRecord, env *reconciler.Env) (external.Client[*v1.DNSRecord], error) {
		return connect(ctx, o.ProviderURL, r, env)
	}
	return kopcontroller.New[*v1.DNSRecord](name, external.New(connect, opts...)).
		Scheme(Scheme()).
		References(&corev1.Secret{}, func(r *v1.DNSRecord) []string { return []string{r.Spec.SecretRef.Name} })
}

// connect reads the token from the Secret r names (a live read: the
// Builder's References makes Env.Client read Secrets from the API server)
// and returns a provider client that uses it.
func connect(ctx context.Context, url string, r *v1.DNSRecord, env *reconciler.Env) (external.Client[*v1.DNSRecord], error) {
	var secret corev1.Secret
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Spec.SecretRef.Name}, &secret); err != nil {
		if koperrors.KindOf(err) == koperrors.NotFound {
			err = koperrors.WithReason(koperrors.Terminal(err), "SecretNotFound")
		}
		return nil, err
	}
	token := string(secret.Data[v1.TokenKey])
	if token == "" {
		return nil, koperrors.WithReason(koperrors.Terminal(koperrors.Errorf(koperrors.Invalid,
			"Secret %s/%s has no key %q", secret.Namespace, secret.Name, v1.TokenKey)), "SecretInvalid")
	}
	return &dnsClient{url: url, token: token}, nil
}
