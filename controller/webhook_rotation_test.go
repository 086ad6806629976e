package controller_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"

	kopcontroller "github.com/kopgo/kopgo/controller"
	"github.com/kopgo/kopgo/internal/certs"
	"github.com/kopgo/kopgo/test/versioned"
)

// rotationCertOptions drive the Authority with clk: a 12 h CA, 1 h
// leaves, 10 min trust delay. Certificates are backdated two days, so
// the API server, which checks them against the real clock, accepts
// those signed at a fake time up to two days ahead.
func rotationCertOptions(clk *clocktesting.FakeClock) func(*certs.Options) {
	return func(o *certs.Options) {
		o.Clock = clk
		o.CALifetime, o.LeafLifetime, o.TrustDelay, o.Resync = 12*time.Hour, time.Hour, 10*time.Minute, 5*time.Minute
		o.Backdate = 48 * time.Hour
	}
}

// load creates Gadgets at v2 at rate per second until stop is closed:
// each create goes through the conversion webhook (v2 to the storage
// version v1 and back) and the validating webhook (at v1).
type load struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	errs       []string
}

func (l *load) run(ctx context.Context, c client.Client, ns string, rate int, stop <-chan struct{}) {
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		wg.Go(func() {
			g := &versioned.GadgetV2{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("load-%d", i)}, Spec: versioned.GadgetV2Spec{Count: 1}}
			if err := c.Create(ctx, g); err != nil {
				l.failed.Add(1)
				l.mu.Lock()
				if len(l.errs) < 5 {
					l.errs = append(l.errs, err.Error())
				}
				l.mu.Unlock()
				return
			}
			l.ok.Add(1)
		})
	}
}

// 50 creates/s through the validating and conversion webhooks while the
// CA and then the serving certificate rotate: none fails.
func TestWebhooksRotateUnderLoad(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := t.Context()
	c := cluster.Client()
	clk := clocktesting.NewFakeClock(time.Now())
	b := gadgetWebhooks(t, "gadget-rotation", ns, kopcontroller.Webhooks[*versioned.Gadget]{
		Validator: gadgetValidator{}, Converter: gadgetConverter,
	})
	kopcontroller.SetWebhookCertOptions(b, rotationCertOptions(clk))
	health := freePort(t)
	run(t, b.HealthPort(health))
	waitReady(t, health)
	a := kopcontroller.WebhookAuthority(b)

	l := &load{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); l.run(ctx, c, ns, 50, stop) }()
	// step moves the fake clock, syncs, and waits while the API server
	// takes up what was published: the real time the trust delay
	// stands for.
	step := func(what string, d time.Duration, changed func(before, after certs.Stats) bool) {
		t.Helper()
		before := a.Stats()
		clk.Step(d)
		if err := a.Sync(ctx); err != nil {
			t.Fatalf("%s: Sync: %v", what, err)
		}
		after := a.Stats()
		if !changed(before, after) {
			t.Fatalf("%s: nothing happened: stats %+v then %+v", what, before, after)
		}
		t.Logf("%s: %+v", what, after)
		time.Sleep(3 * time.Second)
	}
	time.Sleep(3 * time.Second)
	// The CA: a successor joins the bundle at 2/3 of 12 h, signs a trust
	// delay later, and the old CA leaves a leaf lifetime after that.
	step("CA successor trusted", 8*time.Hour, func(b, a certs.Stats) bool { return a.CAsCreated == b.CAsCreated+1 })
	step("CA successor signs", 10*time.Minute, func(b, a certs.Stats) bool { return a.Leaves > b.Leaves })
	step("old CA dropped", time.Hour, func(b, a certs.Stats) bool { return a.Published > b.Published })
	// Then the serving certificate alone, at 2/3 of its hour.
	step("leaf renewed", 45*time.Minute, func(b, a certs.Stats) bool { return a.Leaves > b.Leaves && a.CAsCreated == b.CAsCreated })
	close(stop)
	<-done
	t.Logf("creates through a CA rotation and a leaf rotation: %d admitted, %d failed %v", l.ok.Load(), l.failed.Load(), l.errs)
	if l.failed.Load() != 0 || l.ok.Load() < 500 {
		t.Errorf("%d creates failed (%v), %d admitted", l.failed.Load(), l.errs, l.ok.Load())
	}
}

// Three replicas starting together on one Secret agree on one CA and
// return no error.
func TestWebhooksThreeReplicasOneCA(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := t.Context()
	c := cluster.Client()
	var bs []*kopcontroller.Builder[*versioned.Gadget]
	for range 3 {
		b := gadgetWebhooks(t, "gadget-replicas", ns, kopcontroller.Webhooks[*versioned.Gadget]{
			Validator: gadgetValidator{}, Converter: gadgetConverter,
		}).ControllerOptions(crcontroller.Options{SkipNameValidation: new(true)})
		bs = append(bs, b)
	}
	for _, b := range bs {
		run(t, b)
	}
	eventually(t, 30*time.Second, "every replica published a bundle", func() error {
		for i, b := range bs {
			if a := kopcontroller.WebhookAuthority(b); a == nil || a.Bundle() == nil {
				return fmt.Errorf("replica %d: no bundle", i)
			}
		}
		return nil
	})
	var made, conflicts int64
	for i, b := range bs {
		a := kopcontroller.WebhookAuthority(b)
		st := a.Stats()
		made += st.CAsCreated
		conflicts += st.Conflicts
		if n := strings.Count(string(a.Bundle()), "BEGIN CERTIFICATE"); n != 1 {
			t.Errorf("replica %d trusts %d CAs, want 1", i, n)
		}
		if string(a.Bundle()) != string(kopcontroller.WebhookAuthority(bs[0]).Bundle()) {
			t.Errorf("replica %d publishes another CA than replica 0", i)
		}
	}
	t.Logf("3 replicas: %d CA made, %d lost races resolved", made, conflicts)
	if made != 1 {
		t.Errorf("%d CAs made, want 1", made)
	}
	// Whichever replica the configurations name, a create goes through.
	eventually(t, 30*time.Second, "create at v2", func() error {
		return c.Create(ctx, &versioned.GadgetV2{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g"}})
	})
}
