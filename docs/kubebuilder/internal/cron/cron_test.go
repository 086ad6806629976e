package cron_test

import (
	"testing"
	"time"

	"github.com/kopgo/kopgo/docs/kubebuilder/internal/cron"
)

func TestNext(t *testing.T) {
	at := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct{ spec, from, want string }{
		{"* * * * *", "2026-01-01 10:00:30", "2026-01-01 10:01:00"},
		{"*/15 * * * *", "2026-01-01 10:14:00", "2026-01-01 10:15:00"},
		{"*/15 * * * *", "2026-01-01 10:15:00", "2026-01-01 10:30:00"},
		{"1 * * * *", "2026-01-01 10:01:00", "2026-01-01 11:01:00"},
		{"30 2 * * *", "2026-01-01 10:00:00", "2026-01-02 02:30:00"},
		{"0 9-17/4 * * *", "2026-01-01 10:00:00", "2026-01-01 13:00:00"},
		{"0 0 1 3 *", "2026-01-15 00:00:00", "2026-03-01 00:00:00"},
		{"0 0 * * 0", "2026-01-01 00:00:00", "2026-01-04 00:00:00"}, // 2026-01-04 is a Sunday
		{"0 0 30 2 *", "2026-01-01 00:00:00", "0001-01-01 00:00:00"},
		{"@every 15s", "2026-01-01 10:00:00.5", "2026-01-01 10:00:15"},
	} {
		s, err := cron.Parse(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		if got := s.Next(at(tc.from)); !got.Equal(at(tc.want)) {
			t.Errorf("%q.Next(%s) = %s, want %s", tc.spec, tc.from, got, tc.want)
		}
	}
	for _, bad := range []string{"", "* * * *", "60 * * * *", "*/0 * * * *", "a * * * *", "5-1 * * * *", "@every 0s", "@every soon"} {
		if _, err := cron.Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}
