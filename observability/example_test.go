package observability_test

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/observability"
)

func ExampleMetrics_ObserveReconcile() {
	reg := prometheus.NewRegistry()
	m, err := observability.NewMetrics(reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	err = koperrors.Errorf(koperrors.Unavailable, "registry down")
	m.ObserveReconcile(context.Background(), "webapp", observability.ResultError, err, 120*time.Millisecond)
	n, _ := testutil.GatherAndCount(reg, "kopgo_reconcile_errors_total")
	fmt.Println(n, "error series")
	// Output: 1 error series
}

func ExampleFakeRecorder() {
	var events observability.FakeRecorder
	events.Warning(nil, "InvalidSpec", "Validate", "spec.port 70000: must be at most 65535")
	for _, e := range events.Events() {
		fmt.Println(e.Type, e.Reason, e.Note)
	}
	// Output: Warning InvalidSpec spec.port 70000: must be at most 65535
}
