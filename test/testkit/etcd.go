package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Stored objects: what etcd holds under the API server, read and written
// through etcd's own JSON gateway on its loopback client URL, so that a
// test can see what a write really stored (the API server converts every
// object it serves to the version asked for, so its answers never show
// the version an object is stored at).

// ErrNotStored is returned by [Cluster.Stored] for a key etcd does not
// hold.
var ErrNotStored = errors.New("not stored")

// StoredObject is an object as etcd holds it.
type StoredObject struct {
	// Key is the etcd key.
	Key string
	// Value is what the API server stored: JSON for custom resources,
	// protobuf for most built-in types (no encryption is configured).
	Value []byte
	// ModRevision is the revision of the last write: the object's
	// resourceVersion.
	ModRevision int64
}

// APIVersion is the apiVersion a JSON value was encoded at (a custom
// resource's storage version at the time of the write), or "" if the
// value is not JSON.
func (s StoredObject) APIVersion() string {
	var tm struct {
		APIVersion string `json:"apiVersion"`
	}
	if json.Unmarshal(s.Value, &tm) != nil {
		return ""
	}
	return tm.APIVersion
}

// StorageKey is the etcd key of an object: /registry/<group>/<resource>/
// <namespace>/<name> for custom resources (the API server's default
// prefix; for the core group, /registry/<resource>/...). namespace is ""
// for a cluster-scoped object.
func StorageKey(group, resource, namespace, name string) string {
	parts := []string{"/registry"}
	if group != "" {
		parts = append(parts, group)
	}
	parts = append(parts, resource)
	if namespace != "" {
		parts = append(parts, namespace)
	}
	return strings.Join(append(parts, name), "/")
}

// Stored reads key from etcd, under the API server. A missing key is
// [ErrNotStored].
func (c *Cluster) Stored(ctx context.Context, key string) (StoredObject, error) {
	var resp struct {
		Kvs []struct {
			Value       []byte `json:"value"`
			ModRevision string `json:"mod_revision"`
		} `json:"kvs"`
	}
	if err := c.etcdCall(ctx, "/v3/kv/range", map[string]any{"key": []byte(key)}, &resp); err != nil {
		return StoredObject{}, fmt.Errorf("read %s from etcd: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return StoredObject{}, fmt.Errorf("read %s from etcd: %w", key, ErrNotStored)
	}
	rev, err := strconv.ParseInt(resp.Kvs[0].ModRevision, 10, 64)
	if err != nil {
		return StoredObject{}, fmt.Errorf("read %s from etcd: mod_revision %q: %w", key, resp.Kvs[0].ModRevision, err)
	}
	return StoredObject{Key: key, Value: resp.Kvs[0].Value, ModRevision: rev}, nil
}

// PutStored writes value at key straight into etcd, past the API server,
// and returns the new revision: what an API server with another
// configuration would have written (in a cluster of several API servers,
// one that has not yet seen a CRD's new storage version). The API
// server's watch cache sees the write as a change of the object.
func (c *Cluster) PutStored(ctx context.Context, key string, value []byte) (int64, error) {
	var resp struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	if err := c.etcdCall(ctx, "/v3/kv/put", map[string]any{"key": []byte(key), "value": value}, &resp); err != nil {
		return 0, fmt.Errorf("write %s to etcd: %w", key, err)
	}
	rev, err := strconv.ParseInt(resp.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("write %s to etcd: revision %q: %w", key, resp.Header.Revision, err)
	}
	return rev, nil
}

// etcdCall posts a request to etcd's JSON gateway (byte fields are
// base64, as encoding/json writes []byte).
func (c *Cluster) etcdCall(ctx context.Context, path string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	url := strings.TrimPrefix(c.etcd.args[2], "--listen-client-urls=") + path
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hresp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return err
	}
	defer func() { _ = hresp.Body.Close() }()
	if hresp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s", path, hresp.Status)
	}
	return json.NewDecoder(hresp.Body).Decode(resp)
}
