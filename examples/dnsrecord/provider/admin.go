package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// adminRoutes serves the controls over HTTP, without authentication and
// without faults.
func (s *Server) adminRoutes() {
	s.mux.HandleFunc("GET /admin/records", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, answer{http.StatusOK, s.Records()})
	})
	s.mux.HandleFunc("PUT /admin/records/{id}", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Value string `json:"value"`
		}
		if err := decode(r, &body); err != nil {
			writeJSON(w, errorAnswer(http.StatusBadRequest, err.Error()))
			return
		}
		writeJSON(w, controlAnswer(s.SetValue(r.PathValue("id"), body.Value)))
	})
	s.mux.HandleFunc("DELETE /admin/records/{id}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, controlAnswer(s.Remove(r.PathValue("id"))))
	})
	s.mux.HandleFunc("PUT /admin/tokens", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Tokens []string `json:"tokens"`
		}
		if err := decode(r, &body); err != nil {
			writeJSON(w, errorAnswer(http.StatusBadRequest, err.Error()))
			return
		}
		s.SetTokens(body.Tokens...)
		writeJSON(w, answer{status: http.StatusNoContent})
	})
	s.mux.HandleFunc("PUT /admin/faults", func(w http.ResponseWriter, r *http.Request) {
		var f Faults
		if err := decode(r, &f); err != nil {
			writeJSON(w, errorAnswer(http.StatusBadRequest, err.Error()))
			return
		}
		s.SetFaults(f)
		writeJSON(w, answer{status: http.StatusNoContent})
	})
	s.mux.HandleFunc("GET /admin/faults", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, answer{http.StatusOK, s.Faults()})
	})
	s.mux.HandleFunc("GET /admin/stats", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, answer{http.StatusOK, s.Stats()})
	})
	s.mux.HandleFunc("DELETE /admin/stats", func(w http.ResponseWriter, _ *http.Request) {
		s.ResetStats()
		writeJSON(w, answer{status: http.StatusNoContent})
	})
}

func controlAnswer(err error) answer {
	switch {
	case err == nil:
		return answer{status: http.StatusNoContent}
	case errors.Is(err, ErrNotFound):
		return errorAnswer(http.StatusNotFound, err.Error())
	default:
		return errorAnswer(http.StatusBadRequest, err.Error())
	}
}

// Admin is the Go client of a provider's /admin/ endpoints: the [Server]'s
// controls for a provider in another process.
type Admin struct {
	// URL is the provider's base URL, e.g. "http://127.0.0.1:8053".
	URL string
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
}

// Records returns the live records, oldest first.
func (a Admin) Records(ctx context.Context) ([]Record, error) {
	var recs []Record
	return recs, a.do(ctx, http.MethodGet, "/admin/records", nil, &recs)
}

// SetValue changes a record's value behind its client's back (drift); a
// record that does not exist is [ErrNotFound].
func (a Admin) SetValue(ctx context.Context, id, value string) error {
	return a.do(ctx, http.MethodPut, "/admin/records/"+url.PathEscape(id), map[string]string{"value": value}, nil)
}

// Remove deletes a record behind its client's back (drift); a record that
// does not exist is [ErrNotFound].
func (a Admin) Remove(ctx context.Context, id string) error {
	return a.do(ctx, http.MethodDelete, "/admin/records/"+url.PathEscape(id), nil, nil)
}

// SetTokens replaces the accepted bearer tokens.
func (a Admin) SetTokens(ctx context.Context, tokens ...string) error {
	return a.do(ctx, http.MethodPut, "/admin/tokens", map[string][]string{"tokens": tokens}, nil)
}

// SetFaults replaces the injected faults.
func (a Admin) SetFaults(ctx context.Context, f Faults) error {
	return a.do(ctx, http.MethodPut, "/admin/faults", f, nil)
}

// Stats returns the provider's counts.
func (a Admin) Stats(ctx context.Context) (Stats, error) {
	var s Stats
	return s, a.do(ctx, http.MethodGet, "/admin/stats", nil, &s)
}

// ResetStats starts a new count.
func (a Admin) ResetStats(ctx context.Context) error {
	return a.do(ctx, http.MethodDelete, "/admin/stats", nil, nil)
}

func (a Admin) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(a.URL, "/")+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := a.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&e)
		if resp.StatusCode == http.StatusNotFound {
			return fmt.Errorf("provider %s %s: %w", method, path, ErrNotFound)
		}
		return fmt.Errorf("provider %s %s: %s: %s", method, path, resp.Status, e.Error)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
