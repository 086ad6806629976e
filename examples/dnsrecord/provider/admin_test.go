package provider_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kopgo/kopgo/examples/dnsrecord/provider"
)

// Admin drives a provider over HTTP as the Server's methods do from Go.
func TestAdmin(t *testing.T) {
	s, url := serve(t, provider.Options{Tokens: []string{token}})
	admin := provider.Admin{URL: url + "/"}
	ctx := t.Context()
	id := decodeRecord(t, call(t, url, token, "POST", "/v1/records", www).body).ID

	recs, err := admin.Records(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s.Records(), recs); diff != "" {
		t.Errorf("Records (-server +admin):\n%s", diff)
	}

	if err := admin.SetValue(ctx, id, "198.51.100.7"); err != nil {
		t.Fatal(err)
	}
	if v := s.Records()[0].Value; v != "198.51.100.7" {
		t.Errorf("value after SetValue = %q", v)
	}
	if err := admin.SetValue(ctx, id, "nope"); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("SetValue with a bad value = %v, want a 400", err)
	}

	want := provider.Faults{Seed: 3, Ops: []provider.Op{provider.OpGet}, TooManyRequests: 0.25, RetryAfter: 3 * time.Second,
		ServerError: 0.5, GatewayTimeout: 0.125, Latency: 1, Delay: 1500 * time.Millisecond, Jitter: 10 * time.Millisecond}
	if err := admin.SetFaults(ctx, want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, s.Faults()); diff != "" {
		t.Errorf("Faults (-set +server):\n%s", diff)
	}
	if err := admin.SetFaults(ctx, provider.Faults{}); err != nil {
		t.Fatal(err)
	}

	if err := admin.SetTokens(ctx, "rotated"); err != nil {
		t.Fatal(err)
	}
	if r := call(t, url, token, "GET", "/v1/records", ""); r.status != 401 {
		t.Errorf("old token after SetTokens: %d, want 401", r.status)
	}

	st, err := admin.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Creates != 1 || st.Requests[provider.OpList][401] != 1 || st.Total() != 2 {
		t.Errorf("Stats = %+v, want 1 create and 1 refused list", st)
	}
	if err := admin.ResetStats(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := admin.Stats(ctx); err != nil || st.Total() != 0 {
		t.Errorf("Stats after ResetStats = %+v, %v", st, err)
	}

	if err := admin.Remove(ctx, id); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Records()); n != 0 {
		t.Errorf("%d records after Remove", n)
	}
	for name, err := range map[string]error{"SetValue": admin.SetValue(ctx, id, "192.0.2.1"), "Remove": admin.Remove(ctx, id)} {
		if !errors.Is(err, provider.ErrNotFound) {
			t.Errorf("%s of a missing record = %v, want ErrNotFound", name, err)
		}
	}
}

func TestFaultsJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		json string
		want provider.Faults
		err  string
	}{
		{name: "empty", json: `{}`},
		{name: "durations as strings", json: `{"tooManyRequests":0.1,"retryAfter":"2s","latency":0.5,"delay":"150ms","jitter":"1m"}`,
			want: provider.Faults{TooManyRequests: 0.1, RetryAfter: 2 * time.Second, Latency: 0.5, Delay: 150 * time.Millisecond, Jitter: time.Minute}},
		{name: "ops", json: `{"ops":["create","delete"],"serverError":1}`,
			want: provider.Faults{Ops: []provider.Op{provider.OpCreate, provider.OpDelete}, ServerError: 1}},
		{name: "a bad duration", json: `{"delay":"soon"}`, err: "faults:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got provider.Faults
			err := json.Unmarshal([]byte(tc.json), &got)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			var again provider.Faults
			if err := json.Unmarshal(b, &again); err != nil || !cmp.Equal(got, again) {
				t.Errorf("round trip through %s = %+v, %v", b, again, err)
			}
		})
	}
}
