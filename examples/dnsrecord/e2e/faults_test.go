package e2e

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/examples/dnsrecord/api/v1alpha1"
	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/status"
	"github.com/kopgo/kopgo/test/testkit/fakesystem"
)

// parallel runs f(i) for i in [0, n) on 10 goroutines.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range 10 {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// 100 DNSRecords created, changed and half of them deleted, all at once,
// while 10% of the provider's answers are faults (5xx, 504 after the
// write took effect, 429 with Retry-After, latency): the provider ends
// holding exactly the live set, each record once with its spec's value,
// and every DNSRecord is Ready or gone.
func TestProviderFaultsWhileRecordsComeAndGo(t *testing.T) {
	const n = 100
	ns := cluster.Namespace(t)
	secret(t, ns, "creds", token)
	sys := serveProvider(t)
	// About 10% of the answers: a request meets the first fault whose
	// draw selects it.
	if err := sys.Inject(
		fakesystem.Fault{Rate: 0.01, Status: http.StatusInternalServerError},
		fakesystem.Fault{Rate: 0.01, Status: http.StatusBadGateway},
		fakesystem.Fault{Rate: 0.01, Status: http.StatusServiceUnavailable},
		fakesystem.Fault{Rate: 0.02, LoseAnswer: true, Status: http.StatusGatewayTimeout}, // after the write took effect
		fakesystem.Fault{Rate: 0.03, Status: http.StatusTooManyRequests, RetryAfter: time.Second},
		fakesystem.Fault{Rate: 0.01, Latency: 200 * time.Millisecond},
		fakesystem.Fault{Rate: 0.01, Latency: 500 * time.Millisecond},
	); err != nil {
		t.Fatal(err)
	}
	runOperator(t, "dns-faults", ns, sys.URL(), 5*time.Second)

	records := make([]*v1alpha1.DNSRecord, n)
	parallel(n, func(i int) { records[i] = record(t, ns, fmt.Sprintf("r%03d", i), i, "creds") })
	parallel(n, func(i int) {
		patch := client.MergeFrom(records[i].DeepCopy())
		records[i].Spec.Value = fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)
		if err := cluster.Client().Patch(t.Context(), records[i], patch); err != nil {
			t.Error(err)
		}
	})
	parallel(n/2, func(i int) {
		if err := cluster.Client().Delete(t.Context(), records[2*i]); err != nil {
			t.Error(err)
		}
	})
	start := time.Now()
	eventually(t, 3*time.Minute, "the provider holds exactly the live set", func() error {
		for i, r := range records {
			got, err := get(t, r)
			held := sys.Find(string(r.UID))
			if i%2 == 0 {
				if koperrors.KindOf(err) != koperrors.NotFound {
					return fmt.Errorf("%s not gone: %w", r.Name, err)
				}
				if len(held) != 0 {
					return fmt.Errorf("%s gone, its record is not", r.Name)
				}
				continue
			}
			if err != nil {
				return err
			}
			if len(held) != 1 || value(held[0]) != r.Spec.Value || !ready(got) {
				return fmt.Errorf("%s: %d records %v, Ready %v", r.Name, len(held), held, status.Get(got, status.Ready))
			}
		}
		if total := len(sys.Resources()); total != n/2 {
			return fmt.Errorf("%d records at the provider, want %d", total, n/2)
		}
		return nil
	})
	st := sys.Stats()
	faults := 0
	for _, r := range sys.Requests() {
		if r.Status == http.StatusTooManyRequests || r.Status >= 500 {
			faults++
		}
	}
	t.Logf("settled %s after the last delete; provider: %d requests, %d answered 429/5xx, %d creates stored for %d records",
		time.Since(start).Round(time.Millisecond), st.Requests, faults, st.Created, n)
}

// Drift behind the operator's back, a value changed or a record deleted
// at the provider, is corrected within one period plus at most a quarter
// period, with a DriftCorrected event.
func TestDriftCorrectedWithinOnePeriod(t *testing.T) {
	const n, period = 20, 3 * time.Second
	ns := cluster.Namespace(t)
	secret(t, ns, "creds", token)
	sys := serveProvider(t)
	runOperator(t, "dns-drift", ns, sys.URL(), period)
	records := make([]*v1alpha1.DNSRecord, n)
	parallel(n, func(i int) { records[i] = record(t, ns, fmt.Sprintf("r%03d", i), i, "creds") })
	ids := make([]string, n)
	eventually(t, time.Minute, "every record Ready", func() error {
		for i, r := range records {
			got, err := get(t, r)
			if err != nil || !ready(got) {
				return fmt.Errorf("%s not Ready (%w)", r.Name, err)
			}
			ids[i] = got.Annotations[external.NameAnnotation]
		}
		return nil
	})
	for i, id := range ids {
		var err error
		if i%2 == 0 {
			err = sys.Set(id, "value", "10.99.99.99")
		} else {
			err = sys.Remove(id)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	drifted := time.Now()
	corrected := make([]time.Duration, n)
	eventually(t, period*5/4+5*time.Second, "every drift corrected", func() error {
		left := 0
		for i, r := range records {
			if corrected[i] > 0 {
				continue
			}
			if held := sys.Find(string(r.UID)); len(held) == 1 && value(held[0]) == r.Spec.Value {
				corrected[i] = time.Since(drifted)
				continue
			}
			left++
		}
		if left > 0 {
			return fmt.Errorf("%d not corrected", left)
		}
		return nil
	})
	slowest := slices.Max(corrected)
	// The bound is the eventually above (a period and a quarter, plus
	// slack for a shared machine); the figure is reported.
	t.Logf("drift corrected in %s at the slowest (period %s)", slowest.Round(time.Millisecond), period)
	if total := len(sys.Resources()); total != n {
		t.Errorf("provider holds %d records, want %d", total, n)
	}
}

// While nothing changes the provider sees only the periodic checks, one
// GET per record per period, spread over the period. make test runs 100
// records with a 10 s period; KOPGO_IDLE_PROFILE=1 runs the 500
// records with a 1-minute period (about 3 minutes) and reports its peak.
func TestIdleRequestProfile(t *testing.T) {
	n, period := 100, 10*time.Second
	if os.Getenv("KOPGO_IDLE_PROFILE") != "" {
		n, period = 500, time.Minute
	}
	ns := cluster.Namespace(t)
	secret(t, ns, "creds", token)
	sys := serveProvider(t)
	runOperator(t, "dns-idle", ns, sys.URL(), period)
	records := make([]*v1alpha1.DNSRecord, n)
	parallel(n, func(i int) { records[i] = record(t, ns, fmt.Sprintf("r%03d", i), i, "creds") })
	eventually(t, 2*time.Minute, "every record Ready", func() error {
		for _, r := range records {
			if got, err := get(t, r); err != nil || !ready(got) {
				return fmt.Errorf("%s not Ready (%w)", r.Name, err)
			}
		}
		return nil
	})
	time.Sleep(period * 5 / 4) // every record's first scheduled check is past
	sys.ResetLog()
	from := time.Now()
	time.Sleep(period)
	st := sys.Stats()
	gets, others := st.ByMethod[http.MethodGet], st.Requests-st.ByMethod[http.MethodGet]
	seconds := map[int64]bool{}
	for _, r := range sys.Requests() {
		seconds[r.Time.Unix()] = true
	}
	t.Logf("%d records, period %s: %d GETs in one period (%d other requests), peak %d/s, %d of %d seconds with requests",
		n, period, gets, others, st.PeakPerSecond, len(seconds), time.Now().Unix()-from.Unix()+1)
	if others != 0 {
		t.Errorf("idle requests other than GET: %d", others)
	}
	if gets < n*9/10 || gets > n*11/10 {
		t.Errorf("GETs in one period: %d, want about %d (one per record)", gets, n)
	}
	if mean := float64(n) / period.Seconds(); float64(st.PeakPerSecond) > 4*mean+3 {
		t.Errorf("peak %d requests in one second, want them spread (mean %.1f/s)", st.PeakPerSecond, mean)
	}
}
