package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	koperrors "github.com/kopgo/kopgo/errors"
	v1 "github.com/kopgo/kopgo/examples/dnsrecord/api/v1alpha1"
	"github.com/kopgo/kopgo/external"
)

// httpClient is shared by every dnsClient: one connection pool; a call
// that takes longer than 10 s fails as a Timeout (its outcome unknown).
var httpClient = &http.Client{Timeout: 10 * time.Second}

// dnsClient is the provider's API for one DNSRecord, with the token its
// Secret holds: the external.Client (and external.Finder) of the operator.
type dnsClient struct{ url, token string }

// record is the provider's record, as its API reads and writes it: the
// fields the operator sets, the Tag it finds a record by, and the ID and
// State the provider assigns (and ignores in a body).
type record struct {
	ID    string `json:"id,omitempty"`
	Tag   string `json:"tag,omitempty"`
	State string `json:"state,omitempty"`
	Zone  string `json:"zone"`
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value string `json:"value"`
	TTL   int32  `json:"ttl"`
}

// recordList is the answer to GET /v1/records?tag=.
type recordList struct {
	Records []record `json:"resources"`
}

// want is the record r asks for, tagged with key ("" for an update: the
// provider keeps the tag).
func want(r *v1.DNSRecord, key string) record {
	ttl := r.Spec.TTL
	if ttl == 0 {
		ttl = 300
	}
	return record{Zone: r.Spec.Zone, Name: r.Spec.Name, Type: r.Spec.Type, Value: r.Spec.Value, TTL: ttl, Tag: key}
}

func (c *dnsClient) Observe(ctx context.Context, r *v1.DNSRecord, id string) (external.Observation, error) {
	var got record
	if err := c.call(ctx, http.MethodGet, "/v1/records/"+url.PathEscape(id), nil, &got); err != nil {
		return external.Observation{}, err // a 404 is NotFound: the record is gone
	}
	r.Status.FQDN = r.Spec.FQDN()
	w := want(r, got.Tag)
	w.ID, w.State = got.ID, got.State
	return external.Observation{Exists: true, UpToDate: got == w}, nil
}

func (c *dnsClient) Create(ctx context.Context, r *v1.DNSRecord, key string) (string, error) {
	var made record
	err := c.call(ctx, http.MethodPost, "/v1/records", want(r, key), &made)
	return made.ID, err
}

func (c *dnsClient) Update(ctx context.Context, r *v1.DNSRecord, id string) error {
	return c.call(ctx, http.MethodPut, "/v1/records/"+url.PathEscape(id), want(r, ""), nil)
}

func (c *dnsClient) Delete(ctx context.Context, _ *v1.DNSRecord, id string) error {
	return c.call(ctx, http.MethodDelete, "/v1/records/"+url.PathEscape(id), nil, nil)
}

// Find returns the record created with key, if any: how a create whose
// answer was lost (a crash, a 504) is resolved.
func (c *dnsClient) Find(ctx context.Context, _ *v1.DNSRecord, key string) (string, error) {
	var list recordList
	if err := c.call(ctx, http.MethodGet, "/v1/records?tag="+url.QueryEscape(key), nil, &list); err != nil || len(list.Records) == 0 {
		return "", err
	}
	return list.Records[0].ID, nil
}

// call sends one request; any answer but 2xx becomes a kopgo error
// (koperrors.FromHTTP: 401 Stalled Unauthorized, 404 NotFound, 429 and 5xx
// retried no sooner than Retry-After, 504 Timeout).
func (c *dnsClient) call(ctx context.Context, method, path string, in, out any) error {
	var body bytes.Buffer
	if in != nil {
		if err := json.NewEncoder(&body).Encode(in); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url+path, &body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if err := koperrors.FromHTTP(resp); err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
