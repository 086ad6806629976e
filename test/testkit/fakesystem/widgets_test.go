package fakesystem_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	kopcontroller "github.com/kopgo/kopgo/controller"
	koperrors "github.com/kopgo/kopgo/errors"
	"github.com/kopgo/kopgo/external"
	"github.com/kopgo/kopgo/reconciler"
	"github.com/kopgo/kopgo/test/testkit/fakesystem"
	"github.com/kopgo/kopgo/test/widget"
)

// The tiny operator the integration tests run: each Widget has a resource
// at the fake system whose "size" is the Widget's spec.size, written with
// kopgo's external package. Its Client is what a user writes for a real
// system; the test kit stands in for that system.

const token = "t0k3n"

// widgetClient is the external.Client (and external.Finder) of Widgets.
type widgetClient struct{ url string }

// body is a resource as the client sends and reads it.
type body struct {
	ID    string `json:"id,omitempty"`
	Tag   string `json:"tag,omitempty"`
	State string `json:"state,omitempty"`
	Size  int64  `json:"size"`
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

func (c widgetClient) Observe(ctx context.Context, w *widget.Widget, id string) (external.Observation, error) {
	var got body
	if err := c.call(ctx, http.MethodGet, "/"+url.PathEscape(id), nil, &got); err != nil {
		return external.Observation{}, err // a 404 is NotFound: gone
	}
	o := external.Observation{Exists: true, UpToDate: got.Size == w.Spec.Size}
	if got.State != string(fakesystem.Ready) {
		o.NotReady = "resource " + id + " is " + got.State
	}
	return o, nil
}

func (c widgetClient) Create(ctx context.Context, w *widget.Widget, key string) (string, error) {
	var made body
	err := c.call(ctx, http.MethodPost, "", body{Tag: key, Size: w.Spec.Size}, &made)
	return made.ID, err
}

func (c widgetClient) Update(ctx context.Context, w *widget.Widget, id string) error {
	return c.call(ctx, http.MethodPut, "/"+url.PathEscape(id), body{Size: w.Spec.Size}, nil)
}

func (c widgetClient) Delete(ctx context.Context, _ *widget.Widget, id string) error {
	return c.call(ctx, http.MethodDelete, "/"+url.PathEscape(id), nil, nil)
}

func (c widgetClient) Find(ctx context.Context, _ *widget.Widget, key string) (string, error) {
	var l fakesystem.List
	if err := c.call(ctx, http.MethodGet, "?tag="+url.QueryEscape(key), nil, &l); err != nil || len(l.Resources) == 0 {
		return "", err
	}
	return l.Resources[0].ID, nil
}

func (c widgetClient) call(ctx context.Context, method, path string, in, out any) error {
	var buf bytes.Buffer
	if in != nil {
		if err := json.NewEncoder(&buf).Encode(in); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url+fakesystem.DefaultPath+path, &buf)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
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

// widgetOperator is the operator of the Widgets labelled fakesystem=<ns>,
// against the system at url.
func widgetOperator(name, url, ns string) *kopcontroller.Builder[*widget.Widget] {
	connect := func(context.Context, *widget.Widget, *reconciler.Env) (external.Client[*widget.Widget], error) {
		return widgetClient{url: url}, nil
	}
	return kopcontroller.New[*widget.Widget](name, external.New(connect, external.WithPeriod(time.Hour))).
		Scheme(widget.Scheme()).LabelSelector("fakesystem=" + ns).Concurrency(4)
}
